"""An export written out of sight first and put in place only once it is whole (decision 166).

An export can fail half-way — the disk fills, a quota is reached, the device errs. Written straight to
its path, it left a truncated archive or half a folder of pages where the user expects an export, and
over a previous export of the same name, which it had already destroyed. So an archive is written to
a hidden file beside its target and renamed onto it at the end (a rename within one folder is atomic),
and a markdown export's pages to a hidden folder inside the target, moved into place page by page once
every page is written. On failure the hidden file or folder is removed and the target is as it was.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


def _hidden(folder: Path, name: str) -> Path:
    """A name no one else uses in `folder`: hidden, and unique to this process and call."""
    return folder / f".{name}.{os.getpid()}-{secrets.token_hex(4)}.partial"


@contextmanager
def staged_file(target: Path) -> Iterator[BinaryIO]:
    """A new file beside `target`, renamed onto it when the block ends, removed if it raises.

    A folder at `target` is refused before anything is written (`IsADirectoryError`), as opening it
    would have been."""
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = _hidden(target.parent, target.name)
    try:
        with partial.open("xb") as raw:
            yield raw
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


@contextmanager
def staged_folder(target: Path) -> Iterator[Path]:
    """A hidden folder inside `target` (made if missing) to write pages to; when the block ends each
    file is moved to the same place under `target` (replacing an older page of that name, leaving
    other files alone). If the block raises, the hidden folder is removed, and so is `target` if this
    call made it and nothing else is in it."""
    made = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    partial = _hidden(target, "export")
    partial.mkdir()
    try:
        yield partial
        for folder, _, files in os.walk(partial):
            here = Path(folder)
            into = target / here.relative_to(partial)
            into.mkdir(exist_ok=True)
            for name in files:
                os.replace(here / name, into / name)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        if made:
            try:
                target.rmdir()
            except OSError:
                pass  # not empty: something else was put there meanwhile
        raise
    shutil.rmtree(partial, ignore_errors=True)

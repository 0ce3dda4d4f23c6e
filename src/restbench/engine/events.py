"""Typed events the engine emits; the CLI's progress bar is only one consumer of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class PhaseStarted:
    phase: str  # "generate" | "execute"
    total: int


@dataclass(frozen=True)
class Advanced:
    phase: str
    label: str
    reused: bool = False


@dataclass(frozen=True)
class Notice:
    message: str


Event = PhaseStarted | Advanced | Notice
EventHandler = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The default handler."""

"""The two wordings of a requirement (a module of its own: the CLI's options list them)."""

from __future__ import annotations

import enum


class Variant(str, enum.Enum):
    """Which wording of a requirement a generator is given."""

    PRECISE = "precise"
    VAGUE = "vague"

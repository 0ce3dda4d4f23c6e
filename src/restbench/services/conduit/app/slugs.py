"""Slugs: derived from the title, unique among articles."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import Article

_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


def slugify(title: str) -> str:
    """Lower-case; every run of characters outside a-z and 0-9 becomes one '-'; no '-' at the ends."""
    slug = _NOT_ALPHANUMERIC.sub("-", title.lower()).strip("-")
    return slug or "article"


def unique_slug(db: Session, title: str, article_id: int | None = None) -> str:
    """The slug of `title`, or `<slug>-2`, `<slug>-3`, ... when another article holds it."""
    base = slugify(title)
    candidate, suffix = base, 2
    while True:
        holder = db.scalar(select(Article.id).where(Article.slug == candidate))
        if holder is None or holder == article_id:
            return candidate
        candidate = f"{base}-{suffix}"
        suffix += 1

"""Tags in use."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db import get_db
from ..models import ArticleTag, Tag
from ..schemas import TagListResponse

router = APIRouter(prefix="/api/tags", tags=["Tags"])


@router.get(
    "",
    response_model=TagListResponse,
    summary="List tags",
    description="Every tag carried by at least one article, each once, in alphabetical order.",
    responses={200: {"description": "The tags"}},
)
def list_tags(db: Session = Depends(get_db)) -> dict:
    names = db.scalars(
        select(Tag.name).join(ArticleTag, ArticleTag.tag_id == Tag.id).distinct().order_by(Tag.name)
    ).all()
    return {"tags": list(names)}

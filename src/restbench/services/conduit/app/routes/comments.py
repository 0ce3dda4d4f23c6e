"""Comments on articles."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db import get_db
from ..errors import ValidationErrors, error_responses, forbidden, not_found
from ..models import Comment
from ..schemas import CommentListResponse, CommentResponse, NewCommentRequest
from ..security import OPTIONAL_AUTH, Auth, optional_auth, require_auth
from ..views import comment_view, utcnow
from .articles import article_or_404

router = APIRouter(prefix="/api/articles/{slug}/comments", tags=["Comments"])

SLUG = Path(description="Slug of the article")


@router.get(
    "",
    response_model=CommentListResponse,
    summary="List an article's comments",
    description="All comments of the article, oldest first. Authentication is optional.",
    responses={200: {"description": "The comments"}, **error_responses(401, 404)},
    openapi_extra=OPTIONAL_AUTH,
)
def list_comments(
    slug: str = SLUG,
    auth: Auth | None = Depends(optional_auth),
    db: Session = Depends(get_db),
) -> dict:
    article = article_or_404(db, slug)
    rows = db.scalars(
        select(Comment)
        .where(Comment.article_id == article.id)
        .order_by(Comment.created_at, Comment.id)
    ).all()
    viewer = auth.user if auth else None
    return {"comments": [comment_view(db, comment, viewer) for comment in rows]}


@router.post(
    "",
    response_model=CommentResponse,
    summary="Comment on an article",
    description="Adds a comment by the caller; `body` must not be blank. Answers 200 with the comment.",
    responses={200: {"description": "The new comment"}, **error_responses(401, 404, 422)},
)
def add_comment(
    payload: NewCommentRequest,
    slug: str = SLUG,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    article = article_or_404(db, slug)
    errors = ValidationErrors()
    errors.require("body", payload.comment.body)
    errors.raise_if_any()
    now = utcnow()
    comment = Comment(
        body=payload.comment.body,
        created_at=now,
        updated_at=now,
        article_id=article.id,
        author_id=auth.user.id,
        author=auth.user,
    )
    db.add(comment)
    db.commit()
    return {"comment": comment_view(db, comment, auth.user)}


@router.delete(
    "/{id}",
    status_code=204,
    response_class=Response,
    summary="Delete a comment",
    description=(
        "Only the comment's author may delete it (the article's author may not delete other "
        "people's comments). A comment id that does not belong to this article answers 404."
    ),
    responses={
        204: {"description": "Deleted; no body"},
        **error_responses(401, 403, 404, 422, d403="The caller is not the comment's author"),
    },
)
def delete_comment(
    slug: str = SLUG,
    id: int = Path(description="Id of the comment"),
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> Response:
    article = article_or_404(db, slug)
    comment = db.get(Comment, id)
    if comment is None or comment.article_id != article.id:
        raise not_found("comment")
    if comment.author_id != auth.user.id:
        raise forbidden("comment")
    db.delete(comment)
    db.commit()
    return Response(status_code=204)

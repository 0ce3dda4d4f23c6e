"""Articles: listing, feed, create, read, update, delete, favorites."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query, Response
from sqlalchemy import Select, delete, func, select
from sqlalchemy.orm import Session

from ..db import get_db
from ..errors import ValidationErrors, error_responses, forbidden, not_found
from ..models import Article, ArticleTag, Tag, User, favorites, follows
from ..schemas import ArticleListResponse, ArticleResponse, NewArticleRequest, UpdateArticleRequest
from ..security import OPTIONAL_AUTH, Auth, optional_auth, require_auth
from ..slugs import unique_slug
from ..views import article_view, is_favorited, utcnow

router = APIRouter(prefix="/api/articles", tags=["Articles"])

SLUG = Path(description="Slug of the article")
# Beyond a 64-bit integer the database refuses the query; a 422 says so instead of a 500.
MAX_PAGING = 2**63 - 1
LIMIT = Query(20, ge=1, description="Maximum number of articles to return", le=MAX_PAGING)
OFFSET = Query(0, ge=0, description="Number of articles to skip (after ordering, newest first)",
               le=MAX_PAGING)


def article_or_404(db: Session, slug: str) -> Article:
    article = db.scalar(select(Article).where(Article.slug == slug))
    if article is None:
        raise not_found("article")
    return article


def _page(db: Session, query: Select, limit: int, offset: int, viewer: User | None) -> dict:
    total = db.scalar(select(func.count()).select_from(query.subquery()))
    ordered = query.order_by(Article.created_at.desc(), Article.id.desc())
    rows = db.scalars(ordered.limit(limit).offset(offset)).unique().all()
    return {
        "articles": [article_view(db, article, viewer) for article in rows],
        "articlesCount": total,
    }


def _set_tags(db: Session, article: Article, names: list[str]) -> None:
    seen: list[str] = []
    for raw in names:
        name = raw.strip()
        if name and name not in seen:
            seen.append(name)
    for position, name in enumerate(seen):
        tag = db.scalar(select(Tag).where(Tag.name == name))
        if tag is None:
            tag = Tag(name=name)
            db.add(tag)
            db.flush()
        article.tag_links.append(ArticleTag(tag_id=tag.id, tag=tag, position=position))


@router.get(
    "",
    response_model=ArticleListResponse,
    summary="List articles",
    description=(
        "Articles newest first (by `createdAt`). Filters combine with AND: `tag` (exact tag name), "
        "`author` (username) and `favorited` (username of a user who favorited the article); an "
        "unknown tag or user gives an empty list. `articlesCount` is the number of matching "
        "articles before `limit`/`offset` are applied. Authentication is optional and only fills "
        "`favorited` and `author.following` for the caller. List items have no `body`."
    ),
    responses={200: {"description": "One page of articles"}, **error_responses(401, 422)},
    openapi_extra=OPTIONAL_AUTH,
)
def list_articles(
    tag: str | None = Query(None, description="Only articles that carry this tag (exact match)"),
    author: str | None = Query(None, description="Only articles written by this username"),
    favorited: str | None = Query(None, description="Only articles favorited by this username"),
    limit: int = LIMIT,
    offset: int = OFFSET,
    auth: Auth | None = Depends(optional_auth),
    db: Session = Depends(get_db),
) -> dict:
    query = select(Article)
    if tag is not None:
        tagged = select(ArticleTag.article_id).join(Tag).where(Tag.name == tag)
        query = query.where(Article.id.in_(tagged))
    if author is not None:
        written = select(User.id).where(User.username == author)
        query = query.where(Article.author_id.in_(written))
    if favorited is not None:
        liked = (
            select(favorites.c.article_id)
            .join(User, User.id == favorites.c.user_id)
            .where(User.username == favorited)
        )
        query = query.where(Article.id.in_(liked))
    return _page(db, query, limit, offset, auth.user if auth else None)


@router.get(
    "/feed",
    response_model=ArticleListResponse,
    summary="Feed of followed authors",
    description=(
        "Articles written by the users the caller follows, newest first; `articlesCount` is the "
        "number of such articles before `limit`/`offset`. Empty when the caller follows nobody."
    ),
    responses={200: {"description": "One page of the feed"}, **error_responses(401, 422)},
)
def feed(
    limit: int = LIMIT,
    offset: int = OFFSET,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    followed = select(follows.c.followed_id).where(follows.c.follower_id == auth.user.id)
    query = select(Article).where(Article.author_id.in_(followed))
    return _page(db, query, limit, offset, auth.user)


@router.post(
    "",
    status_code=201,
    response_model=ArticleResponse,
    summary="Create an article",
    description=(
        "The caller becomes the author. `title`, `description` and `body` must not be blank. "
        "`tagList` is optional: tags are trimmed, blank ones dropped, duplicates removed, order "
        "kept. The slug is the title lower-cased with every run of characters other than a-z and "
        "0-9 replaced by one `-` and no `-` at either end (`article` if nothing is left); when "
        "another article already has that slug, `-2`, `-3`, ... is appended (the first free one)."
    ),
    responses={201: {"description": "The new article"}, **error_responses(401, 422)},
)
def create_article(
    payload: NewArticleRequest,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    data = payload.article
    errors = ValidationErrors()
    errors.require("title", data.title)
    errors.require("description", data.description)
    errors.require("body", data.body)
    errors.raise_if_any()

    now = utcnow()
    article = Article(
        slug=unique_slug(db, data.title),
        title=data.title,
        description=data.description,
        body=data.body,
        created_at=now,
        updated_at=now,
        author_id=auth.user.id,
        author=auth.user,
    )
    db.add(article)
    db.flush()
    _set_tags(db, article, data.tagList)
    db.commit()
    return {"article": article_view(db, article, auth.user)}


@router.get(
    "/{slug}",
    response_model=ArticleResponse,
    summary="Get an article",
    description="One article with its body. Authentication is optional.",
    responses={200: {"description": "The article"}, **error_responses(401, 404)},
    openapi_extra=OPTIONAL_AUTH,
)
def get_article(
    slug: str = SLUG,
    auth: Auth | None = Depends(optional_auth),
    db: Session = Depends(get_db),
) -> dict:
    article = article_or_404(db, slug)
    return {"article": article_view(db, article, auth.user if auth else None)}


@router.put(
    "/{slug}",
    response_model=ArticleResponse,
    summary="Update an article",
    description=(
        "Only the author may update. Changes the fields that are sent (`title`, `description`, "
        "`body`; none may be blank); other fields are ignored. A new title gives a new slug by the "
        "same rule as on creation (the old slug then answers 404). `updatedAt` is refreshed, "
        "`createdAt` is kept."
    ),
    responses={
        200: {"description": "The updated article"},
        **error_responses(401, 403, 404, 422, d403="The caller is not the article's author"),
    },
)
def update_article(
    payload: UpdateArticleRequest,
    slug: str = SLUG,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    article = article_or_404(db, slug)
    if article.author_id != auth.user.id:
        raise forbidden("article")
    data = payload.article
    errors = ValidationErrors()
    for field in ("title", "description", "body"):
        value = getattr(data, field)
        if value is not None:
            errors.require(field, value)
    errors.raise_if_any()

    if data.title is not None and data.title != article.title:
        article.title = data.title
        article.slug = unique_slug(db, data.title, article_id=article.id)
    if data.description is not None:
        article.description = data.description
    if data.body is not None:
        article.body = data.body
    article.updated_at = utcnow()
    db.commit()
    return {"article": article_view(db, article, auth.user)}


@router.delete(
    "/{slug}",
    status_code=204,
    response_class=Response,
    summary="Delete an article",
    description="Only the author may delete. Its comments and favorites go with it.",
    responses={
        204: {"description": "Deleted; no body"},
        **error_responses(401, 403, 404, d403="The caller is not the article's author"),
    },
)
def delete_article(
    slug: str = SLUG,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> Response:
    article = article_or_404(db, slug)
    if article.author_id != auth.user.id:
        raise forbidden("article")
    db.delete(article)
    db.commit()
    return Response(status_code=204)


@router.post(
    "/{slug}/favorite",
    response_model=ArticleResponse,
    summary="Favorite an article",
    description=(
        "Marks the article as a favorite of the caller (idempotent: favoriting twice counts once). "
        "Returns the article with `favorited` true and the new `favoritesCount`."
    ),
    tags=["Favorites"],
    responses={200: {"description": "The article"}, **error_responses(401, 404)},
)
def favorite(
    slug: str = SLUG,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    article = article_or_404(db, slug)
    if not is_favorited(db, article, auth.user):
        db.execute(favorites.insert().values(user_id=auth.user.id, article_id=article.id))
        db.commit()
    return {"article": article_view(db, article, auth.user)}


@router.delete(
    "/{slug}/favorite",
    response_model=ArticleResponse,
    summary="Unfavorite an article",
    description=(
        "Removes the article from the caller's favorites (idempotent). Returns the article with "
        "`favorited` false and the new `favoritesCount`."
    ),
    tags=["Favorites"],
    responses={200: {"description": "The article"}, **error_responses(401, 404)},
)
def unfavorite(
    slug: str = SLUG,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    article = article_or_404(db, slug)
    db.execute(
        delete(favorites).where(
            favorites.c.article_id == article.id, favorites.c.user_id == auth.user.id
        )
    )
    db.commit()
    return {"article": article_view(db, article, auth.user)}

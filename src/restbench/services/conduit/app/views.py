"""Turn rows into the JSON shapes of the API."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import exists, func, select
from sqlalchemy.orm import Session

from .models import Article, Comment, User, favorites, follows


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with millisecond precision, e.g. 2024-01-10T09:00:00.000Z."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def utcnow() -> datetime:
    """Naive UTC now, truncated to milliseconds (the precision the API shows)."""
    now = datetime.now(UTC).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def is_following(db: Session, follower: User | None, followed: User) -> bool:
    if follower is None:
        return False
    query = select(
        exists().where(follows.c.follower_id == follower.id, follows.c.followed_id == followed.id)
    )
    return bool(db.scalar(query))


def user_view(user: User, token: str) -> dict:
    return {
        "email": user.email,
        "token": token,
        "username": user.username,
        "bio": user.bio,
        "image": user.image,
    }


def profile_view(db: Session, user: User, viewer: User | None) -> dict:
    return {
        "username": user.username,
        "bio": user.bio,
        "image": user.image,
        "following": is_following(db, viewer, user),
    }


def favorites_count(db: Session, article: Article) -> int:
    query = select(func.count()).select_from(favorites).where(favorites.c.article_id == article.id)
    return int(db.scalar(query) or 0)


def is_favorited(db: Session, article: Article, viewer: User | None) -> bool:
    if viewer is None:
        return False
    query = select(
        exists().where(favorites.c.article_id == article.id, favorites.c.user_id == viewer.id)
    )
    return bool(db.scalar(query))


def article_view(db: Session, article: Article, viewer: User | None) -> dict:
    return {
        "slug": article.slug,
        "title": article.title,
        "description": article.description,
        "body": article.body,
        "tagList": article.tag_list,
        "createdAt": iso(article.created_at),
        "updatedAt": iso(article.updated_at),
        "favorited": is_favorited(db, article, viewer),
        "favoritesCount": favorites_count(db, article),
        "author": profile_view(db, article.author, viewer),
    }


def comment_view(db: Session, comment: Comment, viewer: User | None) -> dict:
    return {
        "id": comment.id,
        "createdAt": iso(comment.created_at),
        "updatedAt": iso(comment.updated_at),
        "body": comment.body,
        "author": profile_view(db, comment.author, viewer),
    }

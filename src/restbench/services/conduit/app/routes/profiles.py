"""Profiles and following."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..db import get_db
from ..errors import APIError, error_responses, not_found
from ..models import User, follows
from ..schemas import ProfileResponse
from ..security import OPTIONAL_AUTH, Auth, optional_auth, require_auth
from ..views import is_following, profile_view

router = APIRouter(prefix="/api/profiles", tags=["Profile"])

USERNAME = Path(description="Username of the profile (case-sensitive)")


def _user_or_404(db: Session, username: str) -> User:
    user = db.scalar(select(User).where(User.username == username))
    if user is None:
        raise not_found("profile")
    return user


@router.get(
    "/{username}",
    response_model=ProfileResponse,
    summary="Get a profile",
    description=(
        "Public profile of a user. Authentication is optional; `following` tells whether the "
        "authenticated caller follows this user and is false for anonymous callers."
    ),
    responses={200: {"description": "The profile"}, **error_responses(401, 404)},
    openapi_extra=OPTIONAL_AUTH,
)
def get_profile(
    username: str = USERNAME,
    auth: Auth | None = Depends(optional_auth),
    db: Session = Depends(get_db),
) -> dict:
    user = _user_or_404(db, username)
    return {"profile": profile_view(db, user, auth.user if auth else None)}


@router.post(
    "/{username}/follow",
    response_model=ProfileResponse,
    summary="Follow a user",
    description=(
        "The caller follows the user (idempotent: following twice keeps one follow). Following "
        'yourself is rejected with 422 `{"errors": {"profile": ["cannot follow yourself"]}}`.'
    ),
    responses={
        200: {"description": "The profile, with `following` true"},
        **error_responses(401, 404, 422, d422="The caller tried to follow themselves"),
    },
)
def follow(
    username: str = USERNAME,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    user = _user_or_404(db, username)
    if user.id == auth.user.id:
        raise APIError(422, {"profile": ["cannot follow yourself"]})
    if not is_following(db, auth.user, user):
        db.execute(follows.insert().values(follower_id=auth.user.id, followed_id=user.id))
        db.commit()
    return {"profile": profile_view(db, user, auth.user)}


@router.delete(
    "/{username}/follow",
    response_model=ProfileResponse,
    summary="Unfollow a user",
    description=(
        "The caller stops following the user (idempotent: unfollowing someone you do not follow "
        "succeeds too). Unfollowing yourself is rejected with 422."
    ),
    responses={
        200: {"description": "The profile, with `following` false"},
        **error_responses(401, 404, 422, d422="The caller tried to unfollow themselves"),
    },
)
def unfollow(
    username: str = USERNAME,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    user = _user_or_404(db, username)
    if user.id == auth.user.id:
        raise APIError(422, {"profile": ["cannot unfollow yourself"]})
    db.execute(
        delete(follows).where(
            follows.c.follower_id == auth.user.id, follows.c.followed_id == user.id
        )
    )
    db.commit()
    return {"profile": profile_view(db, user, auth.user)}

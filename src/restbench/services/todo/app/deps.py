"""Request dependencies: bearer authentication, the current user and rate limiting."""

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from .db import get_db
from .models import User
from .security import ACCESS

bearer_scheme = HTTPBearer(
    auto_error=False,
    scheme_name="Bearer",
    description="The accessToken from POST /users/login or POST /users/refresh, sent as "
    "`Authorization: Bearer <token>`. Tokens are opaque (not JWTs) and live 3600 seconds.",
)


def unauthorized() -> HTTPException:
    return HTTPException(status_code=401, headers={"WWW-Authenticate": "Bearer"})


def get_token_user_id(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer_scheme),
) -> str:
    """The user id of a valid access token; 401 otherwise."""
    header = request.headers.get("Authorization", "")
    if credentials is None or not header.startswith("Bearer "):
        raise unauthorized()
    payload = request.app.state.tokens.read(header.removeprefix("Bearer ").strip())
    if payload is None or payload.get("kind") != ACCESS:
        raise unauthorized()
    return payload["sub"]


def get_todo_user(
    request: Request,
    user_id: str = Depends(get_token_user_id),
    db: Session = Depends(get_db),
) -> User:
    """The caller of a /todos endpoint: must still exist (403) and be within its rate limit."""
    user = db.get(User, user_id)
    if user is None:
        raise HTTPException(status_code=403)
    if not request.app.state.rate_limiter.try_acquire(user.id):
        raise HTTPException(status_code=429)
    return user

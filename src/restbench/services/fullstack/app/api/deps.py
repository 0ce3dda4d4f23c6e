"""Shared dependencies: database session, current user, superuser check, outbox."""

import uuid
from collections.abc import Iterator
from typing import Annotated

import jwt
from fastapi import Depends, HTTPException, Request
from fastapi.security import OAuth2PasswordBearer
from sqlalchemy.orm import Session

from ..core.config import settings
from ..core.security import decode_access_token
from ..mail import Outbox
from ..models import User
from ..schemas import HTTPError

reusable_oauth2 = OAuth2PasswordBearer(tokenUrl=f"{settings.API_V1_STR}/login/access-token")


def get_db(request: Request) -> Iterator[Session]:
    with request.app.state.sessionmaker() as session:
        yield session


def get_outbox(request: Request) -> Outbox:
    return request.app.state.outbox


SessionDep = Annotated[Session, Depends(get_db)]
TokenDep = Annotated[str, Depends(reusable_oauth2)]
OutboxDep = Annotated[Outbox, Depends(get_outbox)]


def get_current_user(session: SessionDep, token: TokenDep) -> User:
    try:
        payload = decode_access_token(token)
    except jwt.InvalidTokenError:
        raise HTTPException(status_code=403, detail="Could not validate credentials")
    subject = payload.get("sub")
    try:
        user_id = uuid.UUID(subject) if subject is not None else None
    except (TypeError, ValueError, AttributeError):
        raise HTTPException(status_code=403, detail="Could not validate credentials")
    user = session.get(User, user_id) if user_id is not None else None
    if not user:
        raise HTTPException(status_code=404, detail="User not found")
    if not user.is_active:
        raise HTTPException(status_code=400, detail="Inactive user")
    return user


CurrentUser = Annotated[User, Depends(get_current_user)]


def get_current_active_superuser(current_user: CurrentUser) -> User:
    if not current_user.is_superuser:
        raise HTTPException(status_code=403, detail="The user doesn't have enough privileges")
    return current_user


SuperUser = Annotated[User, Depends(get_current_active_superuser)]


# ----- documented error responses -----


def _err(description: str) -> dict:
    return {"model": HTTPError, "description": description}


AUTH_RESPONSES: dict[int | str, dict] = {
    400: _err("`Inactive user`: the caller's account is disabled"),
    401: _err("`Not authenticated`: no bearer token was sent"),
    403: _err("`Could not validate credentials`: the token is malformed, forged or expired"),
    404: _err("`User not found`: the token's user no longer exists"),
}

SUPERUSER_RESPONSES: dict[int | str, dict] = {
    **AUTH_RESPONSES,
    403: _err(
        "`Could not validate credentials`: the token is malformed, forged or expired; "
        "`The user doesn't have enough privileges`: the caller is not a superuser"
    ),
}


def responses(base: dict[int | str, dict], **extra: str) -> dict[int | str, dict]:
    """Merge extra documented errors (keyword ``e400="..."``) into a base set."""
    merged = {code: dict(value) for code, value in base.items()}
    for key, text in extra.items():
        code = int(key.lstrip("e"))
        if code in merged:
            merged[code]["description"] = merged[code]["description"] + "; " + text
        else:
            merged[code] = _err(text)
    return dict(sorted(merged.items()))

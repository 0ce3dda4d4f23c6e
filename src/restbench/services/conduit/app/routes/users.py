"""Registration, login and the current user."""

from __future__ import annotations

import re

from fastapi import APIRouter, Depends
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db import get_db
from ..errors import APIError, ValidationErrors, error_responses
from ..models import User
from ..schemas import LoginRequest, NewUserRequest, UpdateUserRequest, UserResponse
from ..security import Auth, hash_password, issue_token, require_auth, verify_password
from ..views import user_view

router = APIRouter(prefix="/api", tags=["User and Authentication"])

EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _username_taken(db: Session, username: str, except_id: int | None = None) -> bool:
    holder = db.scalar(select(User.id).where(User.username == username))
    return holder is not None and holder != except_id


def _email_taken(db: Session, email: str, except_id: int | None = None) -> bool:
    holder = db.scalar(select(User.id).where(User.email == email))
    return holder is not None and holder != except_id


@router.post(
    "/users",
    status_code=201,
    response_model=UserResponse,
    summary="Register a new user",
    description=(
        "Creates an account and returns it with a token. `username`, `email` and `password` must "
        "not be blank; `email` must look like an address and is stored lower-cased. A username or "
        "e-mail (compared case-insensitively) that another account holds is rejected with "
        '`{"errors": {"username": ["has already been taken"]}}` (or `email`). New accounts have '
        'an empty `bio` and `image` (`""`).'
    ),
    responses={201: {"description": "The new user"}, **error_responses(422)},
)
def register(payload: NewUserRequest, db: Session = Depends(get_db)) -> dict:
    data = payload.user
    username = data.username.strip()
    email = data.email.strip().lower()
    errors = ValidationErrors()
    errors.require("username", username)
    errors.require("email", email)
    errors.require("password", data.password)
    if email and not EMAIL_PATTERN.match(email):
        errors.add("email", "is invalid")
    if username and _username_taken(db, username):
        errors.add("username", "has already been taken")
    if email and _email_taken(db, email):
        errors.add("email", "has already been taken")
    errors.raise_if_any()

    user = User(
        username=username, email=email, password_hash=hash_password(data.password), bio="", image=""
    )
    db.add(user)
    db.flush()
    token = issue_token(user)
    db.commit()
    return {"user": user_view(user, token)}


@router.post(
    "/users/login",
    response_model=UserResponse,
    summary="Log in",
    description=(
        "Exchanges e-mail (case-insensitive) and password for the user and a fresh token. Unknown "
        'e-mail or wrong password: 401 `{"errors": {"email or password": ["is invalid"]}}`.'
    ),
    responses={
        200: {"description": "The user with a token"},
        **error_responses(401, 422, d401="Unknown e-mail or wrong password"),
    },
)
def login(payload: LoginRequest, db: Session = Depends(get_db)) -> dict:
    email = payload.user.email.strip().lower()
    errors = ValidationErrors()
    errors.require("email", email)
    errors.require("password", payload.user.password)
    errors.raise_if_any()

    user = db.scalar(select(User).where(User.email == email))
    if user is None or not verify_password(payload.user.password, user.password_hash):
        raise APIError(401, {"email or password": ["is invalid"]})
    return {"user": user_view(user, issue_token(user))}


@router.get(
    "/user",
    response_model=UserResponse,
    summary="Get the current user",
    description="The authenticated user; `token` is the token the request was made with.",
    responses={200: {"description": "The current user"}, **error_responses(401)},
)
def current_user(auth: Auth = Depends(require_auth)) -> dict:
    return {"user": user_view(auth.user, auth.token)}


@router.put(
    "/user",
    response_model=UserResponse,
    summary="Update the current user",
    description=(
        "Changes only the fields that are sent (`email`, `username`, `password`, `bio`, `image`); "
        "omitted or null fields keep their value. `username`, `email` and `password` must not be "
        "blank, `email` must look like an address, and a username or e-mail held by another account "
        "is rejected with 422 `has already been taken`. Existing tokens stay valid."
    ),
    responses={200: {"description": "The updated user"}, **error_responses(401, 422)},
)
def update_current_user(
    payload: UpdateUserRequest,
    auth: Auth = Depends(require_auth),
    db: Session = Depends(get_db),
) -> dict:
    data = payload.user
    user = auth.user
    errors = ValidationErrors()
    username = data.username.strip() if data.username is not None else None
    email = data.email.strip().lower() if data.email is not None else None
    if username is not None:
        errors.require("username", username)
        if username and _username_taken(db, username, except_id=user.id):
            errors.add("username", "has already been taken")
    if email is not None:
        errors.require("email", email)
        if email and not EMAIL_PATTERN.match(email):
            errors.add("email", "is invalid")
        elif email and _email_taken(db, email, except_id=user.id):
            errors.add("email", "has already been taken")
    if data.password is not None:
        errors.require("password", data.password)
    errors.raise_if_any()

    if username is not None:
        user.username = username
    if email is not None:
        user.email = email
    if data.password is not None:
        user.password_hash = hash_password(data.password)
    if data.bio is not None:
        user.bio = data.bio
    if data.image is not None:
        user.image = data.image
    db.commit()
    return {"user": user_view(user, auth.token)}

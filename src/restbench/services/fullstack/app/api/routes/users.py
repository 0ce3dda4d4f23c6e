"""User accounts: self-service profile, signup and administration by superusers."""

import uuid
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from sqlalchemy import delete, func, select

from ...core.security import get_password_hash, verify_password
from ...mail import generate_new_account_email
from ...models import Item, User
from ...schemas import (
    Message,
    UpdatePassword,
    UserCreate,
    UserPublic,
    UserRegister,
    UsersPublic,
    UserUpdate,
    UserUpdateMe,
)
from ..deps import (
    AUTH_RESPONSES,
    SUPERUSER_RESPONSES,
    CurrentUser,
    OutboxDep,
    SessionDep,
    SuperUser,
    responses,
)
from .login import get_user_by_email

router = APIRouter(prefix="/users", tags=["users"])

# Beyond a 64-bit integer the database refuses the query; a 422 says so instead of a 500.
MAX_PAGING = 2**63 - 1
Skip = Annotated[int, Query(ge=0, le=MAX_PAGING, description="Number of users to skip (newest first)")]
Limit = Annotated[int, Query(ge=0, le=MAX_PAGING, description="Maximum number of users to return")]


@router.get("/", response_model=UsersPublic, responses=SUPERUSER_RESPONSES)
def read_users(session: SessionDep, current_user: SuperUser, skip: Skip = 0, limit: Limit = 100) -> UsersPublic:
    """Retrieve users, newest first. `count` is the total number of users."""
    count = session.scalar(select(func.count()).select_from(User))
    users = session.scalars(select(User).order_by(User.created_at.desc()).offset(skip).limit(limit)).all()
    return UsersPublic(data=[UserPublic.model_validate(u) for u in users], count=count)


@router.post(
    "/",
    response_model=UserPublic,
    responses=responses(SUPERUSER_RESPONSES, e400="`The user with this email already exists in the system.`"),
)
def create_user(session: SessionDep, current_user: SuperUser, user_in: UserCreate, outbox: OutboxDep) -> User:
    """Create a new user. A "new account" e-mail with the credentials is sent to the user."""
    if get_user_by_email(session, user_in.email):
        raise HTTPException(status_code=400, detail="The user with this email already exists in the system.")
    user = User(
        email=user_in.email,
        hashed_password=get_password_hash(user_in.password),
        full_name=user_in.full_name,
        is_active=user_in.is_active,
        is_superuser=user_in.is_superuser,
    )
    session.add(user)
    session.commit()
    outbox.send(user.email, generate_new_account_email(user.email, user.email, user_in.password))
    return user


@router.get("/me", response_model=UserPublic, responses=AUTH_RESPONSES)
def read_user_me(current_user: CurrentUser) -> User:
    """Get the current user."""
    return current_user


@router.patch(
    "/me",
    response_model=UserPublic,
    responses=responses(AUTH_RESPONSES, e409="`User with this email already exists`"),
)
def update_user_me(session: SessionDep, user_in: UserUpdateMe, current_user: CurrentUser) -> User:
    """Update own full name and/or e-mail. Only the keys sent are changed."""
    changes = user_in.model_dump(exclude_unset=True)
    if "email" in changes:
        existing = get_user_by_email(session, changes["email"])
        if existing and existing.id != current_user.id:
            raise HTTPException(status_code=409, detail="User with this email already exists")
    for key, value in changes.items():
        setattr(current_user, key, value)
    session.commit()
    return current_user


@router.patch(
    "/me/password",
    response_model=Message,
    responses=responses(
        AUTH_RESPONSES, e400="`Incorrect password`; `New password cannot be the same as the current one`"
    ),
)
def update_password_me(session: SessionDep, body: UpdatePassword, current_user: CurrentUser) -> Message:
    """Change own password; the current password must be given and the new one must differ."""
    if not verify_password(body.current_password, current_user.hashed_password):
        raise HTTPException(status_code=400, detail="Incorrect password")
    if body.current_password == body.new_password:
        raise HTTPException(status_code=400, detail="New password cannot be the same as the current one")
    current_user.hashed_password = get_password_hash(body.new_password)
    session.commit()
    return Message(message="Password updated successfully")


@router.delete(
    "/me",
    response_model=Message,
    responses=responses(AUTH_RESPONSES, e403="`Super users are not allowed to delete themselves`"),
)
def delete_user_me(session: SessionDep, current_user: CurrentUser) -> Message:
    """Delete own account together with all own items. Superusers cannot delete themselves."""
    if current_user.is_superuser:
        raise HTTPException(status_code=403, detail="Super users are not allowed to delete themselves")
    session.execute(delete(Item).where(Item.owner_id == current_user.id))
    session.delete(current_user)
    session.commit()
    return Message(message="User deleted successfully")


@router.post(
    "/signup",
    response_model=UserPublic,
    responses=responses({}, e400="`The user with this email already exists in the system`"),
)
def register_user(session: SessionDep, user_in: UserRegister) -> User:
    """Create a new (active, non-superuser) account without being logged in."""
    if get_user_by_email(session, user_in.email):
        raise HTTPException(status_code=400, detail="The user with this email already exists in the system")
    user_create = UserCreate.model_validate(user_in.model_dump())
    user = User(
        email=user_create.email,
        hashed_password=get_password_hash(user_create.password),
        full_name=user_create.full_name,
        is_active=user_create.is_active,
        is_superuser=user_create.is_superuser,
    )
    session.add(user)
    session.commit()
    return user


@router.get(
    "/{user_id}",
    response_model=UserPublic,
    responses=responses(
        AUTH_RESPONSES,
        e403="`The user doesn't have enough privileges`",
        e404="`User not found` (superusers asking for an unknown id)",
    ),
)
def read_user_by_id(user_id: uuid.UUID, session: SessionDep, current_user: CurrentUser) -> User:
    """Get a user by id. Normal users may only read their own record (403 for any other id,
    existing or not); superusers may read anyone (404 `User not found` for unknown ids)."""
    if user_id == current_user.id:
        return current_user
    if not current_user.is_superuser:
        raise HTTPException(status_code=403, detail="The user doesn't have enough privileges")
    user = session.get(User, user_id)
    if user is None:
        raise HTTPException(status_code=404, detail="User not found")
    return user


@router.patch(
    "/{user_id}",
    response_model=UserPublic,
    responses=responses(
        SUPERUSER_RESPONSES,
        e404="`The user with this id does not exist in the system`",
        e409="`User with this email already exists`",
    ),
)
def update_user(session: SessionDep, current_user: SuperUser, user_id: uuid.UUID, user_in: UserUpdate) -> User:
    """Update a user. Only the keys sent are changed; `password` replaces the password."""
    db_user = session.get(User, user_id)
    if not db_user:
        raise HTTPException(status_code=404, detail="The user with this id does not exist in the system")
    user_data = user_in.model_dump(exclude_unset=True)
    if "email" in user_data:
        existing = get_user_by_email(session, user_data["email"])
        if existing and existing.id != user_id:
            raise HTTPException(status_code=409, detail="User with this email already exists")
    if "password" in user_data:
        db_user.hashed_password = get_password_hash(user_data.pop("password"))
    for key, value in user_data.items():
        setattr(db_user, key, value)
    session.commit()
    return db_user


@router.delete(
    "/{user_id}",
    response_model=Message,
    responses=responses(
        SUPERUSER_RESPONSES,
        e403="`Super users are not allowed to delete themselves`",
        e404="`User not found`",
    ),
)
def delete_user(session: SessionDep, current_user: SuperUser, user_id: uuid.UUID) -> Message:
    """Delete a user and all of their items."""
    user = session.get(User, user_id)
    if not user:
        raise HTTPException(status_code=404, detail="User not found")
    if user == current_user:
        raise HTTPException(status_code=403, detail="Super users are not allowed to delete themselves")
    session.execute(delete(Item).where(Item.owner_id == user_id))
    session.delete(user)
    session.commit()
    return Message(message="User deleted successfully")

"""Login with the OAuth2 password flow, token check and password recovery."""

from datetime import timedelta
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from pydantic import ValidationError
from sqlalchemy import select

from ...core.config import settings
from ...core.security import (
    create_access_token,
    generate_password_reset_token,
    get_password_hash,
    verify_password,
    verify_password_reset_token,
)
from ...mail import generate_reset_password_email
from ...models import User
from ...schemas import LoginForm, Message, NewPassword, Token, UserPublic
from ..deps import (
    AUTH_RESPONSES,
    SUPERUSER_RESPONSES,
    CurrentUser,
    OutboxDep,
    SessionDep,
    SuperUser,
    responses,
)

router = APIRouter(tags=["login"])

_FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


async def password_form(request: Request) -> LoginForm:
    """Parse the urlencoded login form; any other body counts as an empty form."""
    fields: dict[str, str] = {}
    if request.headers.get("content-type", "").split(";")[0].strip().lower() == _FORM_CONTENT_TYPE:
        raw = (await request.body()).decode("utf-8", errors="replace")
        fields = dict(parse_qsl(raw, keep_blank_values=True))
    try:
        return LoginForm.model_validate(fields)
    except ValidationError as exc:
        errors = []
        for error in exc.errors(include_url=False):
            error["loc"] = ("body", *error["loc"])
            errors.append(error)
        raise RequestValidationError(errors)


def get_user_by_email(session, email: str) -> User | None:
    if "\x00" in email:
        # No stored e-mail holds a NUL (the validator refuses it), and PostgreSQL cannot even be
        # asked about one: "no such user" on every database.
        return None
    return session.scalars(select(User).where(User.email == email)).first()


# FastAPI documents 422 only for declared parameters; this form is parsed by hand, so say it here.
FORM_VALIDATION_ERROR = {
    "description": "Validation Error: `username` or `password` missing or not valid",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}},
}


@router.post(
    "/login/access-token",
    response_model=Token,
    responses=responses(
        {422: FORM_VALIDATION_ERROR},
        e400="`Incorrect email or password`; `Inactive user` (right password, disabled account)",
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {_FORM_CONTENT_TYPE: {"schema": LoginForm.model_json_schema()}},
        }
    },
)
def login_access_token(session: SessionDep, form_data: Annotated[LoginForm, Depends(password_form)]) -> Token:
    """OAuth2 compatible token login: get an access token for future requests.

    Send the e-mail as `username`. The token is a bearer token valid for 8 days."""
    user = get_user_by_email(session, form_data.username)
    if user is None or not verify_password(form_data.password, user.hashed_password):
        raise HTTPException(status_code=400, detail="Incorrect email or password")
    elif not user.is_active:
        raise HTTPException(status_code=400, detail="Inactive user")
    expires = timedelta(minutes=settings.ACCESS_TOKEN_EXPIRE_MINUTES)
    return Token(access_token=create_access_token(user.id, expires_delta=expires))


@router.post("/login/test-token", response_model=UserPublic, responses=AUTH_RESPONSES)
def test_token(current_user: CurrentUser) -> User:
    """Test an access token: returns the user it belongs to."""
    return current_user


@router.post("/password-recovery/{email}", response_model=Message)
def recover_password(email: str, session: SessionDep, outbox: OutboxDep) -> Message:
    """Password recovery.

    Always answers with the same message. When `email` belongs to a user, a recovery e-mail
    with a reset link `<frontend>/reset-password?token=<token>` is sent; sent mail can be
    read by a superuser at `GET /api/v1/utils/sent-emails/`."""
    user = get_user_by_email(session, email)
    if user:
        token = generate_password_reset_token(email=email)
        outbox.send(user.email, generate_reset_password_email(user.email, email, token))
    return Message(message="If that email is registered, we sent a password recovery link")


@router.post(
    "/reset-password/",
    response_model=Message,
    responses=responses({}, e400="`Invalid token`; `Inactive user`"),
)
def reset_password(session: SessionDep, body: NewPassword) -> Message:
    """Reset a password with the token from a password recovery e-mail.

    The token stays usable until it expires (48 hours)."""
    email = verify_password_reset_token(token=body.token)
    if not email:
        raise HTTPException(status_code=400, detail="Invalid token")
    user = get_user_by_email(session, email)
    if not user:
        raise HTTPException(status_code=400, detail="Invalid token")
    elif not user.is_active:
        raise HTTPException(status_code=400, detail="Inactive user")
    user.hashed_password = get_password_hash(body.new_password)
    session.commit()
    return Message(message="Password updated successfully")


@router.post(
    "/password-recovery-html-content/{email}",
    response_class=HTMLResponse,
    responses={
        **responses(
            SUPERUSER_RESPONSES,
            e404="`The user with this username does not exist in the system.`",
        ),
        200: {
            "description": "The recovery e-mail as HTML; its subject is in the `subject` header",
            "content": {"text/html": {"schema": {"type": "string"}}},
            "headers": {"subject": {"schema": {"type": "string"}, "description": "E-mail subject"}},
        },
    },
)
def recover_password_html_content(email: str, session: SessionDep, current_user: SuperUser) -> HTMLResponse:
    """HTML content of the password recovery e-mail for a user (nothing is sent)."""
    user = get_user_by_email(session, email)
    if not user:
        raise HTTPException(
            status_code=404, detail="The user with this username does not exist in the system."
        )
    token = generate_password_reset_token(email=email)
    data = generate_reset_password_email(user.email, email, token)
    return HTMLResponse(content=data.html_content, headers={"subject": data.subject})

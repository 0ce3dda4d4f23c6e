"""Account endpoints, reproducing ASP.NET Core Identity's MapIdentityApi."""

import uuid
from datetime import datetime, timedelta, timezone

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from .. import identity, mail
from ..config import ACCESS_TOKEN_SECONDS, LOCKOUT_MINUTES, MAX_FAILED_ACCESS_ATTEMPTS
from ..db import get_db
from ..deps import get_token_user_id, unauthorized
from ..models import User
from ..problems import unauthorized_problem, validation_problem
from ..responses import (
    BAD_REQUEST_EMPTY,
    LOGIN_FAILED,
    NOT_FOUND,
    UNAUTHORIZED,
    VALIDATION_PROBLEM,
)
from ..schemas import (
    AccessTokenResponse,
    EmailRequest,
    InfoRequest,
    InfoResponse,
    LoginRequest,
    RefreshRequest,
    RegisterRequest,
    ResetPasswordRequest,
)
from ..security import REFRESH, hash_password, new_security_stamp, verify_password

router = APIRouter(prefix="/users", tags=["users"])


def _utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _find_by_name(db: Session, name: str) -> User | None:
    normalized = identity.normalize_name(name)
    return db.scalars(select(User).where(User.normalized_user_name == normalized)).first()


def _token_response(request: Request, user: User) -> AccessTokenResponse:
    tokens = request.app.state.tokens
    return AccessTokenResponse(
        token_type="Bearer",
        access_token=tokens.issue_access_token(user.id, user.security_stamp),
        expires_in=ACCESS_TOKEN_SECONDS,
        refresh_token=tokens.issue_refresh_token(user.id, user.security_stamp),
    )


def _info(user: User) -> InfoResponse:
    return InfoResponse(email=user.email, is_email_confirmed=user.email_confirmed)


@router.post(
    "/register",
    status_code=200,
    response_class=Response,
    summary="Register a new account",
    description="Creates an account whose user name and e-mail are both the given address. "
    "The password must have at least 6 characters, a digit, a lowercase and an uppercase "
    "ASCII letter and a non-alphanumeric character. Answers 200 with an empty body.",
    responses={200: {"description": "Registered (empty body)."},
               400: VALIDATION_PROBLEM | {"description": "InvalidEmail, password policy errors "
                                          "(all at once), InvalidUserName or "
                                          "DuplicateUserName (letter case is ignored)."}},
)
def register(body: RegisterRequest, db: Session = Depends(get_db)):
    if not identity.is_valid_email(body.email):
        return validation_problem(identity.invalid_email(body.email))
    password_errors = identity.password_errors(body.password)
    if password_errors:
        return validation_problem(password_errors)
    name_errors = identity.user_name_errors(body.email)
    if name_errors:
        return validation_problem(name_errors)
    if _find_by_name(db, body.email) is not None:
        return validation_problem(identity.duplicate_user_name(body.email))
    db.add(User(
        id=str(uuid.uuid4()),
        user_name=body.email,
        normalized_user_name=identity.normalize_name(body.email),
        email=body.email,
        email_confirmed=False,
        password_hash=hash_password(body.password),
        security_stamp=new_security_stamp(),
        access_failed_count=0,
    ))
    db.commit()
    return Response(status_code=200)


@router.post(
    "/login",
    response_model=AccessTokenResponse,
    summary="Log in with e-mail and password",
    description="The e-mail is matched ignoring letter case. Five consecutive failed attempts "
    "lock the account for 5 minutes: the fifth failure and every attempt during the lockout "
    "(even with the right password) answer 401 with detail `Lockedout`. A successful login "
    "resets the failure count.",
    responses={401: LOGIN_FAILED},
)
def login(body: LoginRequest, request: Request, db: Session = Depends(get_db)):
    user = _find_by_name(db, body.email)
    if user is None:
        return unauthorized_problem("Failed")
    if user.lockout_end is not None and user.lockout_end > _utcnow():
        return unauthorized_problem("Lockedout")
    if not verify_password(body.password, user.password_hash):
        user.access_failed_count += 1
        if user.access_failed_count >= MAX_FAILED_ACCESS_ATTEMPTS:
            user.lockout_end = _utcnow() + timedelta(minutes=LOCKOUT_MINUTES)
            user.access_failed_count = 0
            db.commit()
            return unauthorized_problem("Lockedout")
        db.commit()
        return unauthorized_problem("Failed")
    user.access_failed_count = 0
    user.lockout_end = None
    db.commit()
    return _token_response(request, user)


@router.post(
    "/refresh",
    response_model=AccessTokenResponse,
    summary="Exchange a refresh token for new tokens",
    description="Refresh tokens live 14 days. They stop working when the account's password "
    "changes. An access token is not accepted here.",
    responses={401: UNAUTHORIZED | {"description": "Invalid, expired or revoked refresh "
                                    "token, or not a refresh token (empty body)."}},
)
def refresh(body: RefreshRequest, request: Request, db: Session = Depends(get_db)):
    payload = request.app.state.tokens.read(body.refresh_token)
    if payload is None or payload.get("kind") != REFRESH:
        raise unauthorized()
    user = db.get(User, payload["sub"])
    if user is None or payload.get("stamp") != user.security_stamp:
        raise unauthorized()
    return _token_response(request, user)


@router.get(
    "/confirmEmail",
    response_class=Response,
    summary="Confirm an e-mail address",
    description="Confirmation codes are only ever sent by e-mail, and this deployment sends "
    "no e-mail, so every well-formed request answers 401 with an empty body.",
    responses={200: {"description": "Never answered by this deployment."},
               400: BAD_REQUEST_EMPTY | {"description": "userId or code missing."},
               401: {"description": "Unknown user or invalid code (empty body)."}},
)
def confirm_email(
    db: Session = Depends(get_db),
    user_id: str = Query(alias="userId"),
    code: str = Query(),
    changed_email: str | None = Query(default=None, alias="changedEmail"),
):
    # No confirmation code is ever issued, so none can be valid.
    return Response(status_code=401)


@router.post(
    "/resendConfirmationEmail",
    response_class=Response,
    summary="Send the confirmation e-mail again",
    description="Always answers 200 with an empty body, whether or not the address is known.",
    responses={200: {"description": "Accepted (empty body)."}},
)
def resend_confirmation_email(body: EmailRequest, db: Session = Depends(get_db)):
    user = _find_by_name(db, body.email)
    if user is not None and not user.email_confirmed:
        mail.send_confirmation_link(user.email)
    return Response(status_code=200)


@router.post(
    "/forgotPassword",
    response_class=Response,
    summary="Ask for a password-reset code",
    description="Always answers 200 with an empty body, whether or not the address is known "
    "(reset codes are only sent to confirmed addresses, and no e-mail is sent here).",
    responses={200: {"description": "Accepted (empty body)."}},
)
def forgot_password(body: EmailRequest, db: Session = Depends(get_db)):
    user = _find_by_name(db, body.email)
    if user is not None and user.email_confirmed:
        mail.send_password_reset_code(user.email)
    return Response(status_code=200)


@router.post(
    "/resetPassword",
    response_class=Response,
    summary="Reset a password with a reset code",
    description="Reset codes are only issued to confirmed e-mail addresses and no address is "
    "ever confirmed here, so this answers 400 `InvalidToken` for any e-mail.",
    responses={200: {"description": "Never answered by this deployment."},
               400: VALIDATION_PROBLEM | {"description": "InvalidToken."}},
)
def reset_password(body: ResetPasswordRequest, db: Session = Depends(get_db)):
    user = _find_by_name(db, body.email)
    if user is None or not user.email_confirmed:
        return validation_problem({"InvalidToken": ["Invalid token."]})
    # Reset codes are only mailed to confirmed addresses and no address is ever confirmed
    # here, so no code can be valid.
    return validation_problem({"InvalidToken": ["Invalid token."]})


@router.get(
    "/manage/info",
    response_model=InfoResponse,
    summary="The caller's account information",
    responses={401: UNAUTHORIZED, 404: NOT_FOUND},
)
def get_info(user_id: str = Depends(get_token_user_id), db: Session = Depends(get_db)):
    user = db.get(User, user_id)
    if user is None:
        raise HTTPException(status_code=404)
    return _info(user)


@router.post(
    "/manage/info",
    response_model=InfoResponse,
    summary="Change the caller's password (or request an e-mail change)",
    description="A `newPassword` needs the current password in `oldPassword`; a wrong "
    "`oldPassword` is reported before any policy error of the new password. Changing the "
    "password revokes existing refresh tokens; access tokens stay valid until they expire. "
    "A valid `newEmail` only triggers a confirmation e-mail (not sent here): the e-mail in "
    "the response stays unchanged.",
    responses={400: VALIDATION_PROBLEM | {"description": "InvalidEmail, OldPasswordRequired, "
                                          "PasswordMismatch or password policy errors."},
               401: UNAUTHORIZED, 404: NOT_FOUND},
)
def update_info(body: InfoRequest, user_id: str = Depends(get_token_user_id),
                db: Session = Depends(get_db)):
    user = db.get(User, user_id)
    if user is None:
        raise HTTPException(status_code=404)
    if body.new_email and not identity.is_valid_email(body.new_email):
        return validation_problem(identity.invalid_email(body.new_email))
    if body.new_password:
        if not body.old_password:
            return validation_problem({"OldPasswordRequired": [
                "The old password is required to set a new password. "
                "If the old password is forgotten, use /resetPassword."]})
        if not verify_password(body.old_password, user.password_hash):
            return validation_problem({"PasswordMismatch": ["Incorrect password."]})
        policy_errors = identity.password_errors(body.new_password)
        if policy_errors:
            return validation_problem(policy_errors)
        user.password_hash = hash_password(body.new_password)
        user.security_stamp = new_security_stamp()
        db.commit()
    return _info(user)

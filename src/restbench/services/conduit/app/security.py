"""Password hashing, JWT issuing and the authentication dependencies."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import jwt
from fastapi import Depends, Security
from fastapi.security import APIKeyHeader
from sqlalchemy.orm import Session

from .db import get_db
from .errors import unauthorized
from .models import User

# HS256 needs a key of at least 32 bytes (RFC 7518, 3.2); PyJWT warns on every shorter one.
JWT_SECRET = "conduit-restbench-hs256-signing-key-7f3a9c21e8d4"
JWT_ALGORITHM = "HS256"
TOKEN_LIFETIME = timedelta(days=30)
# Low on purpose: a real key derivation, cheap enough that the log-ins of a benchmark run
# (throwaway accounts on loopback) cost little; production would use several hundred thousand.
PBKDF2_ITERATIONS = 1_000

token_header = APIKeyHeader(
    name="Authorization",
    scheme_name="Token",
    description="The JWT returned by registration or login, sent as `Authorization: Token <jwt>`.",
    auto_error=False,
)


def hash_password(password: str, salt: str | None = None) -> str:
    salt = salt or secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${salt}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        _scheme, iterations, salt, expected = stored.split("$")
    except ValueError:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), int(iterations))
    return hmac.compare_digest(digest.hex(), expected)


def issue_token(user: User) -> str:
    now = datetime.now(UTC)
    claims = {
        "sub": str(user.id),
        "username": user.username,
        "iat": now,
        "exp": now + TOKEN_LIFETIME,
    }
    return jwt.encode(claims, JWT_SECRET, algorithm=JWT_ALGORITHM)


@dataclass(frozen=True)
class Auth:
    user: User
    token: str


def _authenticate(header: str, db: Session) -> Auth:
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "token" or not token:
        raise unauthorized("is invalid")
    try:
        claims = jwt.decode(token, JWT_SECRET, algorithms=[JWT_ALGORITHM])
        user_id = int(claims["sub"])
    except (jwt.PyJWTError, KeyError, TypeError, ValueError):
        raise unauthorized("is invalid") from None
    user = db.get(User, user_id)
    if user is None:
        raise unauthorized("is invalid")
    return Auth(user=user, token=token)


def require_auth(
    header: str | None = Security(token_header), db: Session = Depends(get_db)
) -> Auth:
    if not header:
        raise unauthorized("is missing")
    return _authenticate(header, db)


def optional_auth(
    header: str | None = Security(token_header), db: Session = Depends(get_db)
) -> Auth | None:
    """Anonymous when no header is sent; a header that is sent must be valid."""
    if not header:
        return None
    return _authenticate(header, db)


# Operations with optional authentication: "no token" is also acceptable.
OPTIONAL_AUTH = {"security": [{}]}

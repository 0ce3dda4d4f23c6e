"""Password hashing (PBKDF2-HMAC-SHA256) and JWT creation/decoding."""

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta, timezone
from typing import Any

import jwt

from .config import settings

_SCHEME = "pbkdf2_sha256"


def get_password_hash(password: str, *, salt: str | None = None) -> str:
    salt = salt or secrets.token_hex(16)
    iterations = settings.PASSWORD_HASH_ITERATIONS
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), iterations)
    return f"{_SCHEME}${iterations}${salt}${digest.hex()}"


def verify_password(plain_password: str, hashed_password: str) -> bool:
    try:
        scheme, iterations, salt, expected = hashed_password.split("$")
    except ValueError:
        return False
    if scheme != _SCHEME:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", plain_password.encode(), salt.encode(), int(iterations))
    return hmac.compare_digest(digest.hex(), expected)


def create_access_token(subject: str | Any, expires_delta: timedelta) -> str:
    expire = datetime.now(timezone.utc) + expires_delta
    to_encode = {"exp": expire, "sub": str(subject)}
    return jwt.encode(to_encode, settings.SECRET_KEY, algorithm=settings.ALGORITHM)


def decode_access_token(token: str) -> dict[str, Any]:
    """Raises jwt.InvalidTokenError for a malformed, forged or expired token."""
    return jwt.decode(token, settings.SECRET_KEY, algorithms=[settings.ALGORITHM])


def generate_password_reset_token(email: str) -> str:
    now = datetime.now(timezone.utc)
    expires = now + timedelta(hours=settings.EMAIL_RESET_TOKEN_EXPIRE_HOURS)
    payload = {"exp": expires, "nbf": now, "sub": email}
    return jwt.encode(payload, settings.SECRET_KEY, algorithm=settings.ALGORITHM)


def verify_password_reset_token(token: str) -> str | None:
    try:
        decoded = jwt.decode(token, settings.SECRET_KEY, algorithms=[settings.ALGORITHM])
    except jwt.InvalidTokenError:
        return None
    sub = decoded.get("sub")
    return sub if isinstance(sub, str) else None

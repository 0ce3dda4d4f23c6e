"""Password hashing and bearer tokens.

Tokens are opaque to clients: ``base64url(json payload) + "." + base64url(HMAC-SHA256)``.
They are not JWTs. Both kinds carry the user id, the user's security stamp and an expiry.
Only refresh tokens are checked against the current stamp (so they stop working after a
password change); access tokens stay valid until they expire, as upstream.
"""

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time

from .config import ACCESS_TOKEN_SECONDS, PASSWORD_HASH_ITERATIONS, REFRESH_TOKEN_SECONDS

ACCESS = "access"
REFRESH = "refresh"


# --- passwords -------------------------------------------------------------------------


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PASSWORD_HASH_ITERATIONS)
    return "pbkdf2_sha256${}${}${}".format(
        PASSWORD_HASH_ITERATIONS, _b64encode(salt), _b64encode(digest)
    )


def verify_password(password: str, stored_hash: str) -> bool:
    try:
        algorithm, iterations, salt, expected = stored_hash.split("$")
    except ValueError:
        return False
    if algorithm != "pbkdf2_sha256":
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), _b64decode(salt), int(iterations))
    return hmac.compare_digest(digest, _b64decode(expected))


def new_security_stamp() -> str:
    return secrets.token_hex(16)


# --- tokens ----------------------------------------------------------------------------


class TokenService:
    def __init__(self, secret: bytes):
        self._secret = secret

    def issue_access_token(self, user_id: str, security_stamp: str) -> str:
        return self._sign({"sub": user_id, "kind": ACCESS, "stamp": security_stamp,
                           "exp": int(time.time()) + ACCESS_TOKEN_SECONDS})

    def issue_refresh_token(self, user_id: str, security_stamp: str) -> str:
        return self._sign({"sub": user_id, "kind": REFRESH, "stamp": security_stamp,
                           "exp": int(time.time()) + REFRESH_TOKEN_SECONDS})

    def read(self, token: str) -> dict | None:
        """The payload of a well-formed, correctly signed, unexpired token, else None."""
        try:
            encoded_payload, encoded_signature = token.split(".")
            signature = _b64decode(encoded_signature)
            payload = json.loads(_b64decode(encoded_payload))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            return None
        if not hmac.compare_digest(signature, self._mac(encoded_payload)):
            return None
        if not isinstance(payload, dict) or payload.get("exp", 0) <= time.time():
            return None
        return payload

    def _sign(self, payload: dict) -> str:
        payload["nonce"] = secrets.token_urlsafe(9)
        encoded_payload = _b64encode(json.dumps(payload, separators=(",", ":")).encode())
        return encoded_payload + "." + _b64encode(self._mac(encoded_payload))

    def _mac(self, encoded_payload: str) -> bytes:
        return hmac.new(self._secret, encoded_payload.encode(), hashlib.sha256).digest()


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

"""Runtime settings of the fullstack service.

Everything has a default so the service starts without an environment; the few values
that a deployment would change can be overridden through environment variables.
"""

import os
from dataclasses import dataclass, field


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


@dataclass(frozen=True)
class Settings:
    PROJECT_NAME: str = "Full Stack FastAPI Project"
    API_V1_STR: str = "/api/v1"
    # Signing key of access and password-reset tokens (HS256).
    SECRET_KEY: str = field(
        default_factory=lambda: _env("FULLSTACK_SECRET_KEY", "fullstack-bench-signing-key-9f3c1a7e")
    )
    ALGORITHM: str = "HS256"
    # 60 minutes * 24 hours * 8 days
    ACCESS_TOKEN_EXPIRE_MINUTES: int = 60 * 24 * 8
    EMAIL_RESET_TOKEN_EXPIRE_HOURS: int = 48
    FRONTEND_HOST: str = field(default_factory=lambda: _env("FULLSTACK_FRONTEND_HOST", "http://localhost:5173"))
    # PBKDF2-HMAC-SHA256 work factor; low so that logins stay cheap in a benchmark (throwaway
    # accounts on loopback); production would use several hundred thousand.
    PASSWORD_HASH_ITERATIONS: int = 1_000
    FIRST_SUPERUSER: str = "admin@example.com"
    FIRST_SUPERUSER_PASSWORD: str = "changethis"


settings = Settings()

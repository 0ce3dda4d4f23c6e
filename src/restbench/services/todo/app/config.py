"""Settings of the Todo API. They mirror the framework defaults of the upstream service."""

# Bearer tokens issued by POST /users/login and POST /users/refresh.
ACCESS_TOKEN_SECONDS = 60 * 60
REFRESH_TOKEN_SECONDS = 14 * 24 * 60 * 60

# Account lockout: this many consecutive failed logins lock the account.
MAX_FAILED_ACCESS_ATTEMPTS = 5
LOCKOUT_MINUTES = 5

# Per-user token bucket on /todos: RATE_LIMIT_TOKENS requests, refilled every
# RATE_LIMIT_PERIOD_SECONDS.
RATE_LIMIT_TOKENS = 100
RATE_LIMIT_PERIOD_SECONDS = 10

# PBKDF2-HMAC-SHA256 work factor. Deliberately low: the accounts are throwaway ones on
# loopback, and every log-in of every test pays it (10,000 took ~2.5 ms of CPU a log-in, a few
# percent of a benchmark run); a production deployment would use several hundred thousand.
PASSWORD_HASH_ITERATIONS = 1_000

# Default password policy (ASP.NET Core Identity defaults).
PASSWORD_MIN_LENGTH = 6
PASSWORD_MIN_UNIQUE_CHARS = 1

# Characters allowed in a user name (the user name is the registration e-mail).
ALLOWED_USER_NAME_CHARACTERS = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._@+"
)

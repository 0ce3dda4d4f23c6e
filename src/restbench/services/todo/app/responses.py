"""OpenAPI descriptions of the error responses the endpoints share."""

from .problems import PROBLEM_JSON

_EMPTY = {"description": "Empty body."}

UNAUTHORIZED = {
    "description": "Missing, malformed, invalid or expired access token. Empty body, header "
    "`WWW-Authenticate: Bearer`.",
    "headers": {"WWW-Authenticate": {"schema": {"type": "string", "example": "Bearer"}}},
}
FORBIDDEN = {"description": "The token is valid but its account no longer exists (empty body)."}
NOT_FOUND = {"description": "Not found (empty body)."}
RATE_LIMITED = {"description": "More than 100 requests to /todos by this user within 10 "
                "seconds (empty body)."}
BAD_REQUEST_EMPTY = {"description": "The request could not be read: malformed JSON, a wrong "
                     "type, or a required member, query parameter or integer path id missing "
                     "or invalid (empty body)."}
VALIDATION_PROBLEM = {
    "description": "Validation problem.",
    "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/ValidationProblem"}}},
}
LOGIN_FAILED = {
    "description": "Unknown e-mail or wrong password (`detail`: `Failed`), or the account is "
    "locked out (`detail`: `Lockedout`).",
    "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}, "example": {
        "type": "https://tools.ietf.org/html/rfc9110#section-15.5.2",
        "title": "Unauthorized", "status": 401, "detail": "Failed"}}},
}

TODO_AUTH_ERRORS = {401: UNAUTHORIZED, 403: FORBIDDEN, 429: RATE_LIMITED}

"""Problem-details (RFC 9457) responses."""

from fastapi.responses import JSONResponse

PROBLEM_JSON = "application/problem+json"
VALIDATION_PROBLEM_TYPE = "https://tools.ietf.org/html/rfc9110#section-15.5.1"
UNAUTHORIZED_PROBLEM_TYPE = "https://tools.ietf.org/html/rfc9110#section-15.5.2"


def validation_problem(errors: dict[str, list[str]]) -> JSONResponse:
    body = {
        "type": VALIDATION_PROBLEM_TYPE,
        "title": "One or more validation errors occurred.",
        "status": 400,
        "errors": errors,
    }
    return JSONResponse(body, status_code=400, media_type=PROBLEM_JSON)


def unauthorized_problem(detail: str) -> JSONResponse:
    body = {
        "type": UNAUTHORIZED_PROBLEM_TYPE,
        "title": "Unauthorized",
        "status": 401,
        "detail": detail,
    }
    return JSONResponse(body, status_code=401, media_type=PROBLEM_JSON)

"""The RealWorld error envelope: {"errors": {"<field>": ["<message>", ...]}}."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from .schemas import ErrorBody


class APIError(Exception):
    def __init__(self, status_code: int, errors: dict[str, list[str]]) -> None:
        super().__init__(status_code, errors)
        self.status_code = status_code
        self.errors = errors


def unauthorized(message: str = "is missing") -> APIError:
    return APIError(401, {"token": [message]})


def not_found(resource: str) -> APIError:
    return APIError(404, {resource: ["not found"]})


def forbidden(resource: str) -> APIError:
    return APIError(403, {resource: ["forbidden"]})


class ValidationErrors:
    """Collects field errors and raises them together as one 422."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        self.errors.setdefault(field, []).append(message)

    def require(self, field: str, value: str | None) -> None:
        if value is None or not value.strip():
            self.add(field, "can't be blank")

    def raise_if_any(self) -> None:
        if self.errors:
            raise APIError(422, self.errors)


_SECTIONS = {"body", "query", "path", "header", "cookie"}


def _field_of(loc: tuple) -> str:
    names = [str(part) for part in loc if isinstance(part, str) and part not in _SECTIONS]
    return names[-1] if names else "body"


def _message_of(error: dict) -> str:
    if error.get("type") == "missing":
        return "can't be blank"
    return str(error.get("msg", "is invalid")).lower()


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def _api_error(_request: Request, exc: APIError) -> JSONResponse:
        return JSONResponse(status_code=exc.status_code, content={"errors": exc.errors})

    @app.exception_handler(RequestValidationError)
    async def _invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors: dict[str, list[str]] = {}
        for error in exc.errors():
            errors.setdefault(_field_of(tuple(error.get("loc", ()))), []).append(_message_of(error))
        return JSONResponse(status_code=422, content={"errors": errors})


_DESCRIPTIONS = {
    401: "Missing, malformed, expired or otherwise invalid token "
    '(`{"errors": {"token": ["is missing"]}}` or `["is invalid"]`)',
    403: "The caller is authenticated but is not the owner of the resource",
    404: "The article, profile or comment does not exist",
    422: "Validation failed; each offending field lists its messages",
}


def error_responses(*codes: int, **overrides: str) -> dict[int | str, dict]:
    """OpenAPI `responses` entries for the given error status codes."""
    out: dict[int | str, dict] = {}
    for code in codes:
        description = overrides.get(f"d{code}", _DESCRIPTIONS[code])
        out[code] = {"model": ErrorBody, "description": description}
    return out

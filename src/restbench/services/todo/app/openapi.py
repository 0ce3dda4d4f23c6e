"""The OpenAPI document: FastAPI's, with 400 (not 422) for unreadable requests and the
problem-details schemas registered."""

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from .schemas import Problem, ValidationProblem

DESCRIPTION = """\
A per-user todo list with ASP.NET Core Identity-style accounts.

**Authentication.** `POST /users/login` returns an opaque bearer token (`accessToken`, valid
3600 seconds) and a `refreshToken` (valid 14 days). Send `Authorization: Bearer <accessToken>`
on `/todos` and `/users/manage/*`. Requests without a valid token answer 401 with an empty body
and `WWW-Authenticate: Bearer`.

**Seeded accounts** (present after every reset; passwords satisfy the password policy):

| e-mail | password | role |
| --- | --- | --- |
| `admin@example.com` | `Admin123!` | admin |
| `alice@example.com` | `Alice123!` | user |
| `bob@example.com` | `Bob123!` | user |

**Seeded todos:** id 1 `Buy milk` (alice, isComplete false), id 2 `Pay the electricity bill`
(alice, isComplete true), id 3 `Book a dentist appointment` (bob, isComplete false). The admin
owns no todos. New todos get ids from 4 on; ids are never reused.

**Rules.** Todos are private: another user's todo answers 404 exactly like a missing one.
The admin may read, update and delete any todo by id, but `GET /todos` lists only the caller's
own todos, for the admin too. `/todos` is rate-limited per user: 100 requests per 10 seconds,
then 429 with an empty body. JSON property names are camelCase and are matched
case-insensitively on input. Validation failures answer 400 with an
`application/problem+json` body whose `errors` member maps a property name or an error code to
its messages; requests that cannot be read (malformed JSON, wrong types, a non-integer path
id, a missing required member) answer 400 with an empty body.
"""


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        for path_item in schema.get("paths", {}).values():
            for operation in path_item.values():
                responses = operation.get("responses", {})
                if responses.pop("422", None) is not None and "400" not in responses:
                    responses["400"] = {"description": "The request could not be read: "
                                        "malformed JSON, a wrong type or a missing required "
                                        "member (empty body)."}
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        schemas["ValidationProblem"] = ValidationProblem.model_json_schema()
        schemas["Problem"] = Problem.model_json_schema()
        app.openapi_schema = schema
        return schema

    app.openapi = openapi

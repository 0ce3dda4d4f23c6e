"""Application factory and seed reset."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute

from . import seed
from .db import Base, make_engine, make_sessionmaker
from .errors import install_error_handlers
from .routes import articles, comments, profiles, tags, users

DESCRIPTION = """\
Conduit, the RealWorld blogging API: users, profiles and follows, articles with tags and
favorites, comments.

**Authentication.** Register (`POST /api/users`) or log in (`POST /api/users/login`) to get a JWT
and send it as `Authorization: Token <jwt>`. Protected operations answer 401 without a valid token;
on operations where authentication is optional a token that is sent must be valid.

**Errors** use one envelope: `{"errors": {"<field>": ["<message>", ...]}}`: 401 (no or invalid
token), 403 (not the owner), 404 (unknown article, profile or comment), 422 (validation).

**Lists** are newest first, `limit` defaults to 20 and `offset` to 0, and `articlesCount` counts
all matching articles before paging.

**Seeded accounts** (e-mail / password):

| username | e-mail | password |
| --- | --- | --- |
| alice | alice@conduit.test | alice-password |
| bob | bob@conduit.test | bob-password |
| carol | carol@conduit.test | carol-password |
| dave | dave@conduit.test | dave-password |

**Seeded data.** Articles, newest first (slug, author, tags, favorited by):
`welcome-to-conduit` (alice; welcome),
`indexing-strategies` (bob; databases),
`sqlite-in-production` (bob; databases, sqlite; alice, carol),
`notes-on-data-modelling` (carol; data),
`dragons-of-the-north` (carol; dragons; alice, bob),
`how-to-train-your-dragon` (alice; dragons, training; bob).
Follows: alice follows bob; bob follows alice and carol; carol follows alice; dave follows nobody.
Comments: `how-to-train-your-dragon` has comments 1 (bob), 2 (carol) and 4 (alice);
`sqlite-in-production` has comment 3 (alice).
"""


def _operation_id(route: APIRoute) -> str:
    """camelCase of the handler's name: list_articles -> listArticles."""
    head, *rest = route.name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _openapi(app: FastAPI) -> dict:
    """FastAPI's document, without its generic 422 where only string path parameters exist.

    Those operations cannot fail request validation, and every real 422 is declared with the
    service's own error envelope.
    """
    if app.openapi_schema is None:
        doc = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        for operations in doc["paths"].values():
            for operation in operations.values():
                generic = operation["responses"].get("422", {})
                if "HTTPValidationError" in str(generic):
                    del operation["responses"]["422"]
        schemas = doc.get("components", {}).get("schemas", {})
        if "HTTPValidationError" not in str(doc["paths"]):
            schemas.pop("HTTPValidationError", None)
            schemas.pop("ValidationError", None)
        app.openapi_schema = doc
    return app.openapi_schema


def create_app(database_url: str = "sqlite:///./conduit.db") -> FastAPI:
    app = FastAPI(
        title="Conduit API",
        version="1.0.0",
        description=DESCRIPTION,
        generate_unique_id_function=_operation_id,
    )
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    engine = make_engine(database_url)
    Base.metadata.create_all(engine)
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    install_error_handlers(app)
    for module in (users, profiles, articles, comments, tags):
        app.include_router(module.router)
    reset(app)
    return app


def reset(app: FastAPI) -> None:
    """Back to the seed state: same rows, same ids, in one transaction."""
    with app.state.engine.begin() as conn:
        seed.load(conn)

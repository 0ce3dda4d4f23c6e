"""Application factory and the reset hook used by the benchmark harness."""

import secrets

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from .db import Base, make_engine, make_session_factory
from .openapi import DESCRIPTION, install_openapi
from .ratelimit import TokenBucketLimiter
from .routes import todos, users
from .security import TokenService
from .seed import hash_seed_passwords, load_seed


async def _empty_error_response(request: Request, exc: StarletteHTTPException) -> Response:
    # Errors other than validation problems carry no body, as in the upstream service.
    return Response(status_code=exc.status_code, headers=getattr(exc, "headers", None))


async def _unreadable_request(request: Request, exc: RequestValidationError) -> Response:
    return Response(status_code=400)


def create_app(database_url: str) -> FastAPI:
    app = FastAPI(title="Todo API", version="1.0.0", description=DESCRIPTION)
    app.state.engine = make_engine(database_url)
    app.state.session_factory = make_session_factory(app.state.engine)
    app.state.tokens = TokenService(secrets.token_bytes(32))
    app.state.rate_limiter = TokenBucketLimiter()
    app.state.seed_password_hashes = hash_seed_passwords()

    app.add_exception_handler(StarletteHTTPException, _empty_error_response)
    app.add_exception_handler(RequestValidationError, _unreadable_request)
    app.include_router(users.router)
    app.include_router(todos.router)
    install_openapi(app)

    Base.metadata.create_all(app.state.engine)
    reset(app)
    return app


def reset(app: FastAPI) -> None:
    """Back to the seed state: same rows and ids, no lockouts, empty rate-limit buckets."""
    with app.state.session_factory() as session, session.begin():
        load_seed(session, app.state.seed_password_hashes)
    app.state.rate_limiter.clear()

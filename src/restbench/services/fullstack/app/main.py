"""Application factory of the fullstack service."""

from fastapi import FastAPI
from fastapi.routing import APIRoute

from .api.main import api_router
from .core.config import settings
from .db import Base, make_engine, make_sessionmaker
from .mail import Outbox
from .seed import load_seed

DESCRIPTION = f"""
A small multi-user items API: users (e-mail, full name, active and superuser flags) and the
items they own. All paths are under `{settings.API_V1_STR}`.

**Authentication.** Post the form fields `username` (the e-mail) and `password` as
`application/x-www-form-urlencoded` to `POST {settings.API_V1_STR}/login/access-token`,
then send `Authorization: Bearer <access_token>`. A missing token gives 401
`Not authenticated`; a malformed, forged or expired token gives 403
`Could not validate credentials`; a token of a deleted user gives 404 `User not found`;
a disabled user's token gives 400 `Inactive user`. Superuser-only operations answer 403
`The user doesn't have enough privileges` to normal users. Errors have the body
`{{"detail": "<message>"}}`; request validation errors are 422 with a list of problems.
Successful creations answer 200 (only `POST /utils/test-email/` answers 201). Collection
paths end with `/`; without it the service redirects (307).

**Seeded accounts** (restored on every reset):

| e-mail | password | role | active | items |
| --- | --- | --- | --- | --- |
| `admin@example.com` | `changethis` | superuser (no full name) | yes | 1 |
| `alice@example.com` | `alicepass123` | normal user, "Alice Martin" | yes | 3 |
| `bob@example.com` | `bobpass1234` | normal user, "Bob Stone" | yes | 2 |
| `carol@example.com` | `carolpass12` | normal user, "Carol Inactive" | **no** (disabled) | 1 |
| `dave@example.com` | `davepass123` | normal user, "Dave Empty" | yes | 0 |

So there are 5 users and 7 items in the seed state. Every seeded row was created in
2024; anything created through the API is newer, so lists (newest first) show it first.

**E-mail.** The service has no mail server. Messages it sends (password recovery, the
"new account" message when a superuser creates a user, test e-mails) are captured and can
be read by a superuser at `GET {settings.API_V1_STR}/utils/sent-emails/`.
"""


def _operation_id(route: APIRoute) -> str:
    return f"{route.tags[0]}-{route.name}" if route.tags else route.name


def create_app(database_url: str) -> FastAPI:
    engine = make_engine(database_url)
    Base.metadata.create_all(engine)
    app = FastAPI(
        title=settings.PROJECT_NAME,
        version="0.1.0",
        description=DESCRIPTION.strip(),
        generate_unique_id_function=_operation_id,
    )
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    app.state.outbox = Outbox()
    app.include_router(api_router, prefix=settings.API_V1_STR)
    reset(app)
    return app


def reset(app: FastAPI) -> None:
    """Back to the seed state: all rows replaced in one transaction, outbox emptied."""
    with app.state.sessionmaker() as session, session.begin():
        load_seed(session)
    app.state.outbox.clear()

"""The fixed seed state: three accounts and three todos, always with the same ids."""

from dataclasses import dataclass
from functools import cache

from sqlalchemy import delete, text
from sqlalchemy.orm import Session

from .identity import normalize_name
from .models import ADMIN_ROLE, Todo, User
from .security import hash_password


@dataclass(frozen=True)
class SeedUser:
    id: str
    email: str
    password: str
    role: str | None = None


SEED_USERS = [
    SeedUser("6f1c2a8e-3d4b-4c5a-9e7f-0a1b2c3d4e01", "admin@example.com", "Admin123!",
             ADMIN_ROLE),
    SeedUser("6f1c2a8e-3d4b-4c5a-9e7f-0a1b2c3d4e02", "alice@example.com", "Alice123!"),
    SeedUser("6f1c2a8e-3d4b-4c5a-9e7f-0a1b2c3d4e03", "bob@example.com", "Bob123!"),
]
ADMIN, ALICE, BOB = SEED_USERS

SEED_TODOS = [
    {"id": 1, "title": "Buy milk", "is_complete": False, "owner_id": ALICE.id},
    {"id": 2, "title": "Pay the electricity bill", "is_complete": True, "owner_id": ALICE.id},
    {"id": 3, "title": "Book a dentist appointment", "is_complete": False, "owner_id": BOB.id},
]


@cache
def hash_seed_passwords() -> dict[str, str]:
    """Hashed once per process (a reset, or a server forked after a warm-up, does not pay for
    key stretching again). Callers only read the answer."""
    return {user.id: hash_password(user.password) for user in SEED_USERS}


def load_seed(session: Session, password_hashes: dict[str, str]) -> None:
    """Replace every row with the seed state. The caller commits."""
    session.execute(delete(Todo))
    session.execute(delete(User))
    if _has_sqlite_sequence(session):
        session.execute(text("DELETE FROM sqlite_sequence WHERE name = 'todos'"))
    for seed_user in SEED_USERS:
        session.add(User(
            id=seed_user.id,
            user_name=seed_user.email,
            normalized_user_name=normalize_name(seed_user.email),
            email=seed_user.email,
            email_confirmed=False,
            password_hash=password_hashes[seed_user.id],
            security_stamp="seed-stamp-" + seed_user.id[-2:],
            role=seed_user.role,
            access_failed_count=0,
            lockout_end=None,
        ))
    session.flush()
    session.add_all(Todo(**row) for row in SEED_TODOS)


def _has_sqlite_sequence(session: Session) -> bool:
    if session.get_bind().dialect.name != "sqlite":
        return False
    found = session.execute(
        text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'"))
    return found.first() is not None

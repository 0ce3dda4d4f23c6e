"""Seed state: the first superuser, three normal users (one inactive) and their items.

Ids and creation times are fixed so that every reset restores exactly the same rows.
"""

import uuid
from datetime import datetime, timezone
from functools import lru_cache

from sqlalchemy import delete
from sqlalchemy.orm import Session

from .core.config import settings
from .core.security import get_password_hash
from .models import Item, User


def _at(day: int, hour: int = 9) -> datetime:
    return datetime(2024, 1, day, hour, 0, 0, tzinfo=timezone.utc)


# (id, email, password, full name, active, superuser, created)
SEED_USERS = [
    ("00000000-0000-4000-8000-000000000001", settings.FIRST_SUPERUSER,
     settings.FIRST_SUPERUSER_PASSWORD, None, True, True, _at(1)),
    ("00000000-0000-4000-8000-000000000002", "alice@example.com", "alicepass123",
     "Alice Martin", True, False, _at(2)),
    ("00000000-0000-4000-8000-000000000003", "bob@example.com", "bobpass1234",
     "Bob Stone", True, False, _at(3)),
    ("00000000-0000-4000-8000-000000000004", "carol@example.com", "carolpass12",
     "Carol Inactive", False, False, _at(4)),
    ("00000000-0000-4000-8000-000000000005", "dave@example.com", "davepass123",
     "Dave Empty", True, False, _at(5)),
]

# (id, owner id, title, description, created)
SEED_ITEMS = [
    ("00000000-0000-4000-9000-000000000001", SEED_USERS[0][0], "Admin checklist",
     "Things the administrator reviews", _at(10)),
    ("00000000-0000-4000-9000-000000000002", SEED_USERS[1][0], "Grocery list",
     "Milk, eggs, bread", _at(11)),
    ("00000000-0000-4000-9000-000000000003", SEED_USERS[1][0], "Book club notes",
     None, _at(12)),
    ("00000000-0000-4000-9000-000000000004", SEED_USERS[1][0], "Garden plan",
     "Tomatoes along the south fence", _at(13)),
    ("00000000-0000-4000-9000-000000000005", SEED_USERS[2][0], "Bike repair",
     "Replace the rear brake pads", _at(14)),
    ("00000000-0000-4000-9000-000000000006", SEED_USERS[2][0], "Tax papers",
     None, _at(15)),
    ("00000000-0000-4000-9000-000000000007", SEED_USERS[3][0], "Old notes",
     "Written before the account was disabled", _at(16)),
]


@lru_cache(maxsize=None)
def _seed_hash(email: str, password: str) -> str:
    # Hashing is the slow part of seeding; compute each seeded hash once per process.
    return get_password_hash(password)


def seed_rows() -> list[User | Item]:
    users = [
        User(
            id=uuid.UUID(uid),
            email=email,
            hashed_password=_seed_hash(email, password),
            full_name=full_name,
            is_active=active,
            is_superuser=superuser,
            created_at=created,
        )
        for uid, email, password, full_name, active, superuser, created in SEED_USERS
    ]
    items = [
        Item(id=uuid.UUID(iid), owner_id=uuid.UUID(owner), title=title, description=description,
             created_at=created)
        for iid, owner, title, description, created in SEED_ITEMS
    ]
    return [*users, *items]


def load_seed(session: Session) -> None:
    """Replace every row with the seed state. The caller commits."""
    session.execute(delete(Item))
    session.execute(delete(User))
    session.flush()
    session.add_all(seed_rows())

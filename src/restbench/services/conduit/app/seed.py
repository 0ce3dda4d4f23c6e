"""The fixed seed state: users, articles, tags, comments, follows and favorites.

Every row has an explicit id so that a reset gives the same ids every time. Seed timestamps are
fixed and distinct (and in the past), so ordering by `createdAt` is deterministic and anything
created through the API is newer than every seeded article.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache

from sqlalchemy import Connection, text

from .db import Base
from .models import Article, ArticleTag, Comment, Tag, User, favorites, follows
from .security import hash_password

# id, username, email, password, bio, image
USERS = [
    (1, "alice", "alice@conduit.test", "alice-password", "Writes about dragons and databases.",
     "https://images.conduit.test/alice.png"),
    (2, "bob", "bob@conduit.test", "bob-password", "Backend engineer.",
     "https://images.conduit.test/bob.png"),
    (3, "carol", "carol@conduit.test", "carol-password", "", ""),
    (4, "dave", "dave@conduit.test", "dave-password", "", ""),
]

# id, slug, title, description, body, author id, created (UTC), tags
ARTICLES = [
    (1, "how-to-train-your-dragon", "How to Train Your Dragon", "Ever wonder how?",
     "It takes a Jacobian.", 1, datetime(2024, 1, 10, 9, 0), ["dragons", "training"]),
    (2, "sqlite-in-production", "SQLite in Production", "It scales further than you think.",
     "Turn on WAL and measure.", 2, datetime(2024, 2, 14, 9, 0), ["databases", "sqlite"]),
    (3, "dragons-of-the-north", "Dragons of the North", "A field guide.",
     "They prefer the cold.", 3, datetime(2024, 1, 25, 9, 0), ["dragons"]),
    (4, "indexing-strategies", "Indexing Strategies", "B-trees and beyond.",
     "Index what you filter on.", 2, datetime(2024, 3, 2, 9, 0), ["databases"]),
    (5, "notes-on-data-modelling", "Notes on Data Modelling", "Entities first.",
     "Name things after what they are.", 3, datetime(2024, 2, 1, 9, 0), ["data"]),
    (6, "welcome-to-conduit", "Welcome to Conduit", "Say hello.",
     "This is the first post.", 1, datetime(2024, 3, 20, 9, 0), ["welcome"]),
]

# id, article id, author id, body, created (UTC)
COMMENTS = [
    (1, 1, 2, "Great read, thanks!", datetime(2024, 1, 11, 10, 0)),
    (2, 1, 3, "My dragon still bites.", datetime(2024, 1, 12, 10, 0)),
    (3, 2, 1, "Which journal mode do you use?", datetime(2024, 2, 15, 10, 0)),
    (4, 1, 1, "Thanks, glad it helped.", datetime(2024, 1, 13, 10, 0)),
]

# (follower id, followed id)
FOLLOWS = [(1, 2), (2, 1), (2, 3), (3, 1)]

# (user id, article id)
FAVORITES = [(1, 2), (1, 3), (2, 1), (2, 3), (3, 2)]


@cache
def _password_hash(username: str, password: str) -> str:
    # A fixed salt per seeded user: the hash is computed once per process, not on every reset.
    return hash_password(password, salt=f"seed-{username}")


def _tag_ids() -> dict[str, int]:
    ids: dict[str, int] = {}
    for *_, tags in ARTICLES:
        for name in tags:
            ids.setdefault(name, len(ids) + 1)
    return ids


def load(conn: Connection) -> None:
    """Delete every row and insert the seed, on the given connection (one transaction)."""
    for table in reversed(Base.metadata.sorted_tables):
        conn.execute(table.delete())

    conn.execute(
        User.__table__.insert(),
        [
            {"id": uid, "username": name, "email": email,
             "password_hash": _password_hash(name, password), "bio": bio, "image": image}
            for uid, name, email, password, bio, image in USERS
        ],
    )
    tag_ids = _tag_ids()
    conn.execute(Tag.__table__.insert(), [{"id": i, "name": n} for n, i in tag_ids.items()])
    conn.execute(
        Article.__table__.insert(),
        [
            {"id": aid, "slug": slug, "title": title, "description": description, "body": body,
             "author_id": author, "created_at": created, "updated_at": created}
            for aid, slug, title, description, body, author, created, _tags in ARTICLES
        ],
    )
    conn.execute(
        ArticleTag.__table__.insert(),
        [
            {"article_id": aid, "tag_id": tag_ids[name], "position": position}
            for aid, *_, tags in ARTICLES
            for position, name in enumerate(tags)
        ],
    )
    conn.execute(
        Comment.__table__.insert(),
        [
            {"id": cid, "article_id": aid, "author_id": author, "body": body,
             "created_at": created, "updated_at": created}
            for cid, aid, author, body, created in COMMENTS
        ],
    )
    conn.execute(follows.insert(), [{"follower_id": a, "followed_id": b} for a, b in FOLLOWS])
    conn.execute(favorites.insert(), [{"user_id": u, "article_id": a} for u, a in FAVORITES])
    _restart_sequences(conn)


def _restart_sequences(conn: Connection) -> None:
    """Make the next generated id follow the seed's largest id.

    SQLite tables here have no AUTOINCREMENT, so the next rowid is already max(id) + 1. On
    PostgreSQL the serial sequences must be moved explicitly.
    """
    if conn.dialect.name != "postgresql":
        return
    for table in (User.__table__, Tag.__table__, Article.__table__, Comment.__table__):
        conn.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                f"COALESCE((SELECT MAX(id) FROM {table.name}), 0) + 1, false)"
            )
        )

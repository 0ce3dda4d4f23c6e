"""ORM models: users (an Identity-like account) and their todos."""

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .db import Base

ADMIN_ROLE = "admin"


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    user_name: Mapped[str] = mapped_column(String(256))
    normalized_user_name: Mapped[str] = mapped_column(String(256), unique=True, index=True)
    email: Mapped[str] = mapped_column(String(256))
    email_confirmed: Mapped[bool] = mapped_column(Boolean, default=False)
    password_hash: Mapped[str] = mapped_column(String(256))
    security_stamp: Mapped[str] = mapped_column(String(64))
    role: Mapped[str | None] = mapped_column(String(32), nullable=True)
    access_failed_count: Mapped[int] = mapped_column(Integer, default=0)
    lockout_end: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)

    todos: Mapped[list["Todo"]] = relationship(
        back_populates="owner", cascade="all, delete-orphan", passive_deletes=True
    )

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN_ROLE


class Todo(Base):
    __tablename__ = "todos"
    # AUTOINCREMENT: ids of deleted todos are never handed out again.
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str] = mapped_column(Text)
    is_complete: Mapped[bool] = mapped_column(Boolean, default=False)
    owner_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)

    owner: Mapped[User] = relationship(back_populates="todos")

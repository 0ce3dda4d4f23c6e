"""Outgoing e-mail.

The service has no SMTP server: every message it would send is captured in an in-memory
outbox that superusers can read through ``GET /api/v1/utils/sent-emails/``. The outbox is
emptied when the service is reset.
"""

import html
import threading
from dataclasses import dataclass
from datetime import datetime, timezone

from .core.config import settings


@dataclass(frozen=True)
class EmailData:
    subject: str
    html_content: str


@dataclass(frozen=True)
class CapturedEmail:
    email_to: str
    subject: str
    html_content: str
    sent_at: datetime


class Outbox:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[CapturedEmail] = []

    def send(self, email_to: str, data: EmailData) -> None:
        message = CapturedEmail(email_to, data.subject, data.html_content, datetime.now(timezone.utc))
        with self._lock:
            self._messages.append(message)

    def messages(self) -> list[CapturedEmail]:
        with self._lock:
            return list(self._messages)

    def clear(self) -> None:
        with self._lock:
            self._messages.clear()


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title></head><body>{body}</body></html>"
    )


def generate_test_email(email_to: str) -> EmailData:
    subject = f"{settings.PROJECT_NAME} - Test email"
    body = f"<p>Test email for: {html.escape(email_to)}</p>"
    return EmailData(subject=subject, html_content=_page(subject, body))


def generate_reset_password_email(email_to: str, email: str, token: str) -> EmailData:
    subject = f"{settings.PROJECT_NAME} - Password recovery for user {email}"
    link = f"{settings.FRONTEND_HOST}/reset-password?token={token}"
    body = (
        f"<p>We received a request to recover the password of user {html.escape(email)}.</p>"
        f"<p><a href=\"{link}\">Reset password</a></p>"
        f"<p>The link is valid for {settings.EMAIL_RESET_TOKEN_EXPIRE_HOURS} hours.</p>"
    )
    return EmailData(subject=subject, html_content=_page(subject, body))


def generate_new_account_email(email_to: str, username: str, password: str) -> EmailData:
    subject = f"{settings.PROJECT_NAME} - New account for user {username}"
    body = (
        f"<p>An account was created for you.</p>"
        f"<p>Username: {html.escape(username)}<br>Password: {html.escape(password)}</p>"
        f"<p><a href=\"{settings.FRONTEND_HOST}\">Go to the dashboard</a></p>"
    )
    return EmailData(subject=subject, html_content=_page(subject, body))

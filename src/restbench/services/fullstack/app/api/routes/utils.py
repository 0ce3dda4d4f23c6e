"""Health check, test e-mail and the captured outbox."""

from typing import Annotated

from fastapi import APIRouter, Query

from ...mail import generate_test_email
from ...schemas import EmailAddress, Message, SentEmail, SentEmails
from ..deps import (  # noqa: F401 - CurrentUser: two mutants swap SuperUser for it
    SUPERUSER_RESPONSES,
    CurrentUser,
    OutboxDep,
    SuperUser,
)

router = APIRouter(prefix="/utils", tags=["utils"])


@router.post("/test-email/", status_code=201, response_model=Message, responses=SUPERUSER_RESPONSES)
def test_email(email_to: Annotated[EmailAddress, Query()], current_user: SuperUser, outbox: OutboxDep) -> Message:
    """Send a test e-mail (it lands in the outbox, see `GET /api/v1/utils/sent-emails/`)."""
    outbox.send(email_to, generate_test_email(email_to=email_to))
    return Message(message="Test email sent")


@router.get("/sent-emails/", response_model=SentEmails, responses=SUPERUSER_RESPONSES)
def read_sent_emails(
    current_user: SuperUser,
    outbox: OutboxDep,
    email_to: Annotated[str | None, Query(description="Only messages sent to this exact address")] = None,
) -> SentEmails:
    """E-mails the service has sent, oldest first.

    The service has no mail server: password recovery, user creation by a superuser and the
    test e-mail put their message here instead. A recovery message's `html_content` contains
    the link `http://localhost:5173/reset-password?token=<token>`; that token is what
    `POST /api/v1/reset-password/` expects."""
    messages = [m for m in outbox.messages() if email_to is None or m.email_to == email_to]
    data = [SentEmail(email_to=m.email_to, subject=m.subject, html_content=m.html_content, sent_at=m.sent_at) for m in messages]
    return SentEmails(data=data, count=len(data))


@router.get("/health-check/")
def health_check() -> bool:
    """Always `true` while the service runs."""
    return True

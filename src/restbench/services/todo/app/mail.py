"""Outgoing e-mail. This deployment has no mail transport (like the upstream service's no-op
sender): messages are logged and dropped."""

import logging

log = logging.getLogger(__name__)


def send_confirmation_link(email: str) -> None:
    log.info("confirmation e-mail for %s dropped (no mail transport)", email)


def send_password_reset_code(email: str) -> None:
    log.info("password-reset e-mail for %s dropped (no mail transport)", email)

"""TODO-13: forgot-password and resend-confirmation always succeed silently; a password
reset of an unconfirmed account is refused as an invalid token."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_email_flows():
    for path in ["/users/forgotPassword", "/users/resendConfirmationEmail"]:
        for email in ["alice@example.com", "nobody@example.com"]:
            r = requests.post(f"{BASE_URL}{path}", json={"email": email}, timeout=TIMEOUT)
            assert r.status_code == 200, (path, email)
            assert r.content == b"", (path, email)

    r = requests.post(f"{BASE_URL}/users/resetPassword",
                      json={"email": "alice@example.com", "resetCode": "CfDJ8abc",
                            "newPassword": "Alice456!"}, timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.headers.get("Content-Type", "").startswith("application/problem+json")
    assert r.json()["errors"] == {"InvalidToken": ["Invalid token."]}

    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "alice@example.com", "password": "Alice123!"}, timeout=TIMEOUT)
    assert r.status_code == 200

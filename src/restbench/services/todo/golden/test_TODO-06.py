"""TODO-06: a wrong password or an unknown e-mail is refused with a 401 problem 'Failed'."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_login_failure_problem():
    for email, password in [("alice@example.com", "Wrong123!"), ("nobody@example.com", "Nobody123!")]:
        r = requests.post(f"{BASE_URL}/users/login",
                          json={"email": email, "password": password}, timeout=TIMEOUT)
        assert r.status_code == 401, email
        assert r.headers.get("Content-Type", "").startswith("application/problem+json"), email
        body = r.json()
        assert body["type"] == "https://tools.ietf.org/html/rfc9110#section-15.5.2"
        assert body["title"] == "Unauthorized"
        assert body["status"] == 401
        assert body["detail"] == "Failed"

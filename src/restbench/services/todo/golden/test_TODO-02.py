"""TODO-02: registration rejects malformed e-mail addresses with an InvalidEmail problem."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_register_rejects_invalid_email():
    for email in ["carol.example.com", "carol@", "@example.com", "carol@home@example.com", ""]:
        r = requests.post(f"{BASE_URL}/users/register",
                          json={"email": email, "password": "Valid123!"}, timeout=TIMEOUT)
        assert r.status_code == 400, email
        assert r.headers.get("Content-Type", "").startswith("application/problem+json"), email
        body = r.json()
        assert body["title"] == "One or more validation errors occurred."
        assert body["status"] == 400
        assert body["errors"] == {"InvalidEmail": [f"Email '{email}' is invalid."]}, email

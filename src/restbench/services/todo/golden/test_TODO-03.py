"""TODO-03: a user name (e-mail) can be registered only once, ignoring letter case."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_duplicate_registration_is_case_insensitive():
    r = requests.post(f"{BASE_URL}/users/register",
                      json={"email": "Carol@Example.com", "password": "Carol123!"}, timeout=TIMEOUT)
    assert r.status_code == 200

    for email in ["carol@example.com", "ALICE@EXAMPLE.COM"]:
        r = requests.post(f"{BASE_URL}/users/register",
                          json={"email": email, "password": "Other123!"}, timeout=TIMEOUT)
        assert r.status_code == 400, email
        assert r.headers.get("Content-Type", "").startswith("application/problem+json")
        assert r.json()["errors"] == {
            "DuplicateUserName": [f"Username '{email}' is already taken."]}

    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "carol@example.com", "password": "Other123!"}, timeout=TIMEOUT)
    assert r.status_code == 401

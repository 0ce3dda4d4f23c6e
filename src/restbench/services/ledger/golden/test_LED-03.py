"""LED-03: Calls without a valid bearer token are refused with 401 and WWW-Authenticate."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10
PROBLEM = "https://ledger.example/problems/"
PASSWORDS = {"alice": "alice-pass-1", "bob": "bob-pass-2", "carol": "carol-pass-3"}


def login(username):
    r = requests.post(f"{BASE_URL}/v1/login",
                      json={"username": username, "password": PASSWORDS[username]}, timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['token']}"}


def test_missing_or_unknown_token_is_refused():
    token = login("alice")["Authorization"].split(" ", 1)[1]
    for headers in [{}, {"Authorization": "Bearer " + "0" * 48}, {"Authorization": f"Token {token}"}]:
        r = requests.get(f"{BASE_URL}/v1/accounts", headers=headers, timeout=TIMEOUT)
        assert r.status_code == 401, headers
        assert r.headers["Content-Type"].startswith("application/problem+json")
        assert r.json()["type"] == PROBLEM + "unauthenticated"
        assert r.headers.get("WWW-Authenticate", "").startswith("Bearer")

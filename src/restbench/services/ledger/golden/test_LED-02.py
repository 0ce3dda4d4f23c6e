"""LED-02: A wrong password or an unknown user name is refused as unauthenticated."""

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


def test_bad_credentials_are_refused():
    for body in [{"username": "alice", "password": "wrong-pass"},
                 {"username": "mallory", "password": "alice-pass-1"}]:
        r = requests.post(f"{BASE_URL}/v1/login", json=body, timeout=TIMEOUT)
        assert r.status_code == 401, body
        assert r.headers["Content-Type"].startswith("application/problem+json")
        assert r.json()["type"] == PROBLEM + "invalid-credentials"
        assert r.json()["status"] == 401
        assert "token" not in r.json()

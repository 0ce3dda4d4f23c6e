"""LED-01: A user logs in with name and password and the token identifies that user."""

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


def test_login_token_identifies_the_user():
    for username, display_name in [("alice", "Alice Martin"), ("bob", "Bob Keller")]:
        r = requests.post(f"{BASE_URL}/v1/login",
                          json={"username": username, "password": PASSWORDS[username]},
                          timeout=TIMEOUT)
        assert r.status_code == 200
        body = r.json()
        assert isinstance(body["token"], str) and body["token"] != ""
        assert body["tokenType"] == "Bearer"
        assert body["expiresIn"] == 3600
        r = requests.get(f"{BASE_URL}/v1/me", headers={"Authorization": f"Bearer {body['token']}"},
                         timeout=TIMEOUT)
        assert r.status_code == 200
        assert r.json() == {"username": username, "displayName": display_name}

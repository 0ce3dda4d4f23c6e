"""TODO-12: account info shows the caller's e-mail, unconfirmed; it needs a token."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def info_for(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    return requests.get(f"{BASE_URL}/users/manage/info",
                        headers={"Authorization": f"Bearer {r.json()['accessToken']}"},
                        timeout=TIMEOUT)


def test_account_info():
    r = info_for("alice@example.com", "Alice123!")
    assert r.status_code == 200
    assert r.json() == {"email": "alice@example.com", "isEmailConfirmed": False}

    r = info_for("bob@example.com", "Bob123!")
    assert r.status_code == 200
    assert r.json() == {"email": "bob@example.com", "isEmailConfirmed": False}

    r = requests.get(f"{BASE_URL}/users/manage/info", timeout=TIMEOUT)
    assert r.status_code == 401
    assert r.content == b""
    assert r.headers.get("WWW-Authenticate") == "Bearer"

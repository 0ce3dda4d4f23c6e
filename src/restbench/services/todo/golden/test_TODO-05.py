"""TODO-05: a successful login returns a usable bearer token pair; the e-mail is matched
ignoring letter case."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_login_returns_tokens():
    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "alice@example.com", "password": "Alice123!"}, timeout=TIMEOUT)
    assert r.status_code == 200
    body = r.json()
    assert body["tokenType"] == "Bearer"
    assert body["expiresIn"] == 3600
    assert isinstance(body["accessToken"], str) and body["accessToken"]
    assert isinstance(body["refreshToken"], str) and body["refreshToken"]
    assert body["accessToken"] != body["refreshToken"]

    r = requests.get(f"{BASE_URL}/users/manage/info",
                     headers={"Authorization": f"Bearer {body['accessToken']}"}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["email"] == "alice@example.com"

    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "ALICE@Example.COM", "password": "Alice123!"}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["accessToken"]

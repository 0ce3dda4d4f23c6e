"""TODO-09: a refresh token buys a new token pair; access tokens and garbage are refused."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_refresh_tokens():
    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "alice@example.com", "password": "Alice123!"}, timeout=TIMEOUT)
    assert r.status_code == 200
    tokens = r.json()

    r = requests.post(f"{BASE_URL}/users/refresh",
                      json={"refreshToken": tokens["refreshToken"]}, timeout=TIMEOUT)
    assert r.status_code == 200
    fresh = r.json()
    assert fresh["tokenType"] == "Bearer"
    assert fresh["expiresIn"] == 3600
    assert isinstance(fresh["accessToken"], str) and fresh["accessToken"]
    assert isinstance(fresh["refreshToken"], str) and fresh["refreshToken"]

    r = requests.get(f"{BASE_URL}/users/manage/info",
                     headers={"Authorization": f"Bearer {fresh['accessToken']}"}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["email"] == "alice@example.com"

    for bad in [tokens["accessToken"], "not-a-token"]:
        r = requests.post(f"{BASE_URL}/users/refresh", json={"refreshToken": bad}, timeout=TIMEOUT)
        assert r.status_code == 401
        assert r.content == b""
        assert r.headers.get("WWW-Authenticate") == "Bearer"

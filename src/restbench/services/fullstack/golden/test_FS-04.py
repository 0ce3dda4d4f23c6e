import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
API = BASE_URL + "/api/v1"
T = 10


def login(email, password):
    return requests.post(
        f"{API}/login/access-token", data={"username": email, "password": password}, timeout=T
    )


def auth(email, password):
    r = login(email, password)
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['access_token']}"}


def test_test_token_returns_the_callers_profile():
    headers = auth("alice@example.com", "alicepass123")
    r = requests.post(f"{API}/login/test-token", headers=headers, timeout=T)
    assert r.status_code == 200
    body = r.json()
    assert body["email"] == "alice@example.com"
    assert body["full_name"] == "Alice Martin"
    assert body["is_active"] is True
    assert body["is_superuser"] is False
    assert body["id"]

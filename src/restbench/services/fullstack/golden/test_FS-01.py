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


def test_superuser_login_returns_working_bearer_token():
    r = login("admin@example.com", "changethis")
    assert r.status_code == 200
    body = r.json()
    assert isinstance(body["access_token"], str) and body["access_token"]
    assert body["token_type"] == "bearer"
    r = requests.post(
        f"{API}/login/test-token",
        headers={"Authorization": f"Bearer {body['access_token']}"},
        timeout=T,
    )
    assert r.status_code == 200
    assert r.json()["email"] == "admin@example.com"

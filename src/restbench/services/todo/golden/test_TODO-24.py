"""TODO-24: the todo endpoints need a valid access token."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def assert_unauthorized(r):
    assert r.status_code == 401
    assert r.content == b""
    assert r.headers.get("WWW-Authenticate") == "Bearer"


def test_todos_require_access_token():
    assert_unauthorized(requests.get(f"{BASE_URL}/todos", timeout=TIMEOUT))
    assert_unauthorized(requests.get(f"{BASE_URL}/todos",
                                     headers={"Authorization": "Bearer not-a-valid-token"},
                                     timeout=TIMEOUT))
    assert_unauthorized(requests.post(f"{BASE_URL}/todos", json={"title": "Sneaky"},
                                      timeout=TIMEOUT))

    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "alice@example.com", "password": "Alice123!"}, timeout=TIMEOUT)
    tokens = r.json()
    assert_unauthorized(requests.get(
        f"{BASE_URL}/todos", headers={"Authorization": f"Bearer {tokens['refreshToken']}"},
        timeout=TIMEOUT))
    assert_unauthorized(requests.get(
        f"{BASE_URL}/todos", headers={"Authorization": f"Bearer {tokens['accessToken']}x"},
        timeout=TIMEOUT))

    r = requests.get(f"{BASE_URL}/todos",
                     headers={"Authorization": f"Bearer {tokens['accessToken']}"}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert sorted(todo["id"] for todo in r.json()) == [1, 2]

"""TODO-01: a newly registered account can log in and starts with an empty todo list."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_register_login_and_list_empty():
    r = requests.post(f"{BASE_URL}/users/register",
                      json={"email": "carol@example.com", "password": "Carol123!"}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.content == b""

    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "carol@example.com", "password": "Carol123!"}, timeout=TIMEOUT)
    assert r.status_code == 200
    token = r.json()["accessToken"]
    assert isinstance(token, str) and token

    r = requests.get(f"{BASE_URL}/todos", headers={"Authorization": f"Bearer {token}"},
                     timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == []

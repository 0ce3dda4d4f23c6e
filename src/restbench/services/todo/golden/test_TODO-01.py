"""TODO-01: a newly registered account can log in, starts with an empty todo list and shows its
address as given, unconfirmed."""

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

    headers = {"Authorization": f"Bearer {token}"}
    r = requests.get(f"{BASE_URL}/todos", headers=headers, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == []

    r = requests.get(f"{BASE_URL}/users/manage/info", headers=headers, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {"email": "carol@example.com", "isEmailConfirmed": False}

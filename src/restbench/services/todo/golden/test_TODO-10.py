"""TODO-10: changing the password switches the login password and revokes refresh tokens,
while issued access tokens stay valid."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def login(password):
    return requests.post(f"{BASE_URL}/users/login",
                         json={"email": "alice@example.com", "password": password},
                         timeout=TIMEOUT)


def test_password_change():
    r = login("Alice123!")
    assert r.status_code == 200
    tokens = r.json()
    auth = {"Authorization": f"Bearer {tokens['accessToken']}"}

    r = requests.post(f"{BASE_URL}/users/manage/info", headers=auth,
                      json={"oldPassword": "Alice123!", "newPassword": "Alice456!"}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {"email": "alice@example.com", "isEmailConfirmed": False}

    assert login("Alice123!").status_code == 401
    assert login("Alice456!").status_code == 200

    r = requests.post(f"{BASE_URL}/users/refresh",
                      json={"refreshToken": tokens["refreshToken"]}, timeout=TIMEOUT)
    assert r.status_code == 401

    r = requests.get(f"{BASE_URL}/users/manage/info", headers=auth, timeout=TIMEOUT)
    assert r.status_code == 200

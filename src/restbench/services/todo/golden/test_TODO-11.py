"""TODO-11: a password change needs the correct old password, checked before the policy."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def test_password_change_errors():
    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "alice@example.com", "password": "Alice123!"}, timeout=TIMEOUT)
    auth = {"Authorization": f"Bearer {r.json()['accessToken']}"}
    url = f"{BASE_URL}/users/manage/info"

    r = requests.post(url, headers=auth, json={"newPassword": "Alice456!"}, timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.headers.get("Content-Type", "").startswith("application/problem+json")
    assert r.json()["errors"] == {"OldPasswordRequired": [
        "The old password is required to set a new password. "
        "If the old password is forgotten, use /resetPassword."]}

    r = requests.post(url, headers=auth, json={"oldPassword": "Wrong123!", "newPassword": "short"},
                      timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.json()["errors"] == {"PasswordMismatch": ["Incorrect password."]}

    r = requests.post(url, headers=auth, json={"oldPassword": "Alice123!", "newPassword": "short"},
                      timeout=TIMEOUT)
    assert r.status_code == 400
    assert set(r.json()["errors"]) == {"PasswordTooShort", "PasswordRequiresNonAlphanumeric",
                                       "PasswordRequiresDigit", "PasswordRequiresUpper"}

    r = requests.post(f"{BASE_URL}/users/login",
                      json={"email": "alice@example.com", "password": "Alice123!"}, timeout=TIMEOUT)
    assert r.status_code == 200

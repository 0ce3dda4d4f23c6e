"""TODO-08: a successful login resets the count of failed attempts."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def login(password):
    return requests.post(f"{BASE_URL}/users/login",
                         json={"email": "alice@example.com", "password": password},
                         timeout=TIMEOUT)


def test_successful_login_resets_failure_count():
    for attempt in range(4):
        r = login("Wrong123!")
        assert r.status_code == 401
        assert r.json()["detail"] == "Failed"
    assert login("Alice123!").status_code == 200

    for attempt in range(4):
        r = login("Wrong123!")
        assert r.status_code == 401
        assert r.json()["detail"] == "Failed", attempt
    assert login("Alice123!").status_code == 200

"""TODO-07: five consecutive wrong passwords lock the account, even for the right password."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def login(email, password):
    return requests.post(f"{BASE_URL}/users/login",
                         json={"email": email, "password": password}, timeout=TIMEOUT)


def test_lockout_after_five_failures():
    for attempt in range(1, 5):
        r = login("bob@example.com", "Wrong123!")
        assert r.status_code == 401, attempt
        assert r.json()["detail"] == "Failed", attempt

    r = login("bob@example.com", "Wrong123!")
    assert r.status_code == 401
    assert r.json()["detail"] == "Lockedout"

    r = login("bob@example.com", "Bob123!")
    assert r.status_code == 401
    assert r.json()["detail"] == "Lockedout"

    r = login("alice@example.com", "Alice123!")
    assert r.status_code == 200

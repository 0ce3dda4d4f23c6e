"""TODO-19: the owner replaces a todo's title and completion; an absent isComplete means
false."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_update_own_todo():
    alice = auth("alice@example.com", "Alice123!")
    r = requests.put(f"{BASE_URL}/todos/1", headers=alice,
                     json={"id": 1, "title": "Buy oat milk", "isComplete": True}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.content == b""
    r = requests.get(f"{BASE_URL}/todos/1", headers=alice, timeout=TIMEOUT)
    assert r.json() == {"id": 1, "title": "Buy oat milk", "isComplete": True}

    r = requests.put(f"{BASE_URL}/todos/2", headers=alice,
                     json={"id": 2, "title": "Pay the gas bill"}, timeout=TIMEOUT)
    assert r.status_code == 200
    r = requests.get(f"{BASE_URL}/todos/2", headers=alice, timeout=TIMEOUT)
    assert r.json() == {"id": 2, "title": "Pay the gas bill", "isComplete": False}

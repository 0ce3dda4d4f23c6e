"""TODO-21: the owner deletes a todo; it is gone afterwards."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_delete_own_todo():
    alice = auth("alice@example.com", "Alice123!")
    r = requests.delete(f"{BASE_URL}/todos/2", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.content == b""

    r = requests.get(f"{BASE_URL}/todos/2", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 404
    r = requests.get(f"{BASE_URL}/todos", headers=alice, timeout=TIMEOUT)
    assert r.json() == [{"id": 1, "title": "Buy milk", "isComplete": False}]
    r = requests.delete(f"{BASE_URL}/todos/2", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 404

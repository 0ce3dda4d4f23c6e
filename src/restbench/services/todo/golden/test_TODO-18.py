"""TODO-18: another user's todo cannot be read, updated or deleted; it answers 404 like a
missing one."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_foreign_todos_are_invisible():
    bob = auth("bob@example.com", "Bob123!")
    r = requests.get(f"{BASE_URL}/todos/1", headers=bob, timeout=TIMEOUT)
    assert r.status_code == 404
    assert r.content == b""
    r = requests.put(f"{BASE_URL}/todos/1", headers=bob,
                     json={"id": 1, "title": "Hacked", "isComplete": True}, timeout=TIMEOUT)
    assert r.status_code == 404
    assert r.content == b""
    r = requests.delete(f"{BASE_URL}/todos/1", headers=bob, timeout=TIMEOUT)
    assert r.status_code == 404
    assert r.content == b""
    r = requests.get(f"{BASE_URL}/todos/999", headers=bob, timeout=TIMEOUT)
    assert r.status_code == 404

    alice = auth("alice@example.com", "Alice123!")
    r = requests.get(f"{BASE_URL}/todos/1", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {"id": 1, "title": "Buy milk", "isComplete": False}

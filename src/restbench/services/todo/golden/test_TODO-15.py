"""TODO-15: creating a todo ignores a client-supplied id and isComplete."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_create_ignores_id_and_is_complete():
    alice = auth("alice@example.com", "Alice123!")
    r = requests.post(f"{BASE_URL}/todos", headers=alice,
                      json={"id": 99, "title": "Call mom", "isComplete": True}, timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json() == {"id": 4, "title": "Call mom", "isComplete": False}

    r = requests.get(f"{BASE_URL}/todos/4", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["isComplete"] is False

    r = requests.get(f"{BASE_URL}/todos/99", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 404

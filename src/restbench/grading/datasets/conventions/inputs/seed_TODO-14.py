"""TODO-14: creating a todo answers 201 with its location and the new item."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_create_todo():
    alice = auth("alice@example.com", "Alice123!")
    r = requests.post(f"{BASE_URL}/todos", headers=alice, json={"title": "Water the plants"},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.headers["Location"] == "/todos/4"
    assert r.json() == {"id": 4, "title": "Water the plants", "isComplete": False}

    r = requests.get(f"{BASE_URL}/todos/4", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {"id": 4, "title": "Water the plants", "isComplete": False}

    r = requests.get(f"{BASE_URL}/todos", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert {"id": 4, "title": "Water the plants", "isComplete": False} in r.json()

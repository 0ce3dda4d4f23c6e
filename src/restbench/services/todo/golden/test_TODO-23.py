"""TODO-23: the id of a deleted todo is never given to a new todo, whoever creates it."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_ids_are_not_reused():
    alice = auth("alice@example.com", "Alice123!")
    bob = auth("bob@example.com", "Bob123!")
    r = requests.post(f"{BASE_URL}/todos", headers=alice, json={"title": "First"}, timeout=TIMEOUT)
    assert r.status_code == 201
    first_id = r.json()["id"]
    r = requests.delete(f"{BASE_URL}/todos/{first_id}", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200

    r = requests.post(f"{BASE_URL}/todos", headers=bob, json={"title": "Second"}, timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json()["id"] > first_id
    r = requests.get(f"{BASE_URL}/todos/{first_id}", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 404

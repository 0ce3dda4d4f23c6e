"""TODO-22: the admin reads, updates and deletes other users' todos by id, but lists only
their own."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_admin_rights():
    admin = auth("admin@example.com", "Admin123!")
    r = requests.get(f"{BASE_URL}/todos/3", headers=admin, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {"id": 3, "title": "Book a dentist appointment", "isComplete": False}

    r = requests.put(f"{BASE_URL}/todos/3", headers=admin,
                     json={"id": 3, "title": "Dentist on Friday", "isComplete": True},
                     timeout=TIMEOUT)
    assert r.status_code == 200
    r = requests.delete(f"{BASE_URL}/todos/1", headers=admin, timeout=TIMEOUT)
    assert r.status_code == 200
    r = requests.get(f"{BASE_URL}/todos", headers=admin, timeout=TIMEOUT)
    assert r.json() == []

    bob = auth("bob@example.com", "Bob123!")
    r = requests.get(f"{BASE_URL}/todos/3", headers=bob, timeout=TIMEOUT)
    assert r.json() == {"id": 3, "title": "Dentist on Friday", "isComplete": True}

    alice = auth("alice@example.com", "Alice123!")
    r = requests.get(f"{BASE_URL}/todos", headers=alice, timeout=TIMEOUT)
    assert [todo["id"] for todo in r.json()] == [2]
    r = requests.get(f"{BASE_URL}/todos/1", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 404

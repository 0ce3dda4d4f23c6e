"""TODO-17: the todo list holds only the caller's own todos, for the admin too."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def listing(email, password):
    r = requests.get(f"{BASE_URL}/todos", headers=auth(email, password), timeout=TIMEOUT)
    assert r.status_code == 200
    return sorted(r.json(), key=lambda todo: todo["id"])


def test_list_is_scoped_to_caller():
    assert listing("alice@example.com", "Alice123!") == [
        {"id": 1, "title": "Buy milk", "isComplete": False},
        {"id": 2, "title": "Pay the electricity bill", "isComplete": True},
    ]
    assert listing("bob@example.com", "Bob123!") == [
        {"id": 3, "title": "Book a dentist appointment", "isComplete": False},
    ]
    assert listing("admin@example.com", "Admin123!") == []

"""TODO-16: a todo without a usable title is refused with a Title validation problem."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_create_requires_title():
    alice = auth("alice@example.com", "Alice123!")
    for body in [{}, {"title": ""}, {"title": "   "}, {"title": None}]:
        r = requests.post(f"{BASE_URL}/todos", headers=alice, json=body, timeout=TIMEOUT)
        assert r.status_code == 400, body
        assert r.headers.get("Content-Type", "").startswith("application/problem+json"), body
        problem = r.json()
        assert problem["type"] == "https://tools.ietf.org/html/rfc9110#section-15.5.1"
        assert problem["title"] == "One or more validation errors occurred."
        assert problem["status"] == 400
        assert problem["errors"] == {"Title": ["The Title field is required."]}, body

    r = requests.get(f"{BASE_URL}/todos", headers=alice, timeout=TIMEOUT)
    assert sorted(todo["id"] for todo in r.json()) == [1, 2]

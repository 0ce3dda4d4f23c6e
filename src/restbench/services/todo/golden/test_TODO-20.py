"""TODO-20: an update must repeat the path id in the body; the title is validated first."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_update_id_mismatch_and_validation_order():
    alice = auth("alice@example.com", "Alice123!")
    for body in [{"id": 2, "title": "Renamed", "isComplete": True},
                 {"title": "Renamed", "isComplete": True}]:
        r = requests.put(f"{BASE_URL}/todos/1", headers=alice, json=body, timeout=TIMEOUT)
        assert r.status_code == 400, body
        assert r.content == b"", body

    r = requests.put(f"{BASE_URL}/todos/1", headers=alice, json={"id": 2, "title": ""},
                     timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.headers.get("Content-Type", "").startswith("application/problem+json")
    assert r.json()["errors"] == {"Title": ["The Title field is required."]}

    r = requests.get(f"{BASE_URL}/todos/1", headers=alice, timeout=TIMEOUT)
    assert r.json() == {"id": 1, "title": "Buy milk", "isComplete": False}
    r = requests.get(f"{BASE_URL}/todos/2", headers=alice, timeout=TIMEOUT)
    assert r.json() == {"id": 2, "title": "Pay the electricity bill", "isComplete": True}

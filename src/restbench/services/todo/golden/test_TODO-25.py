"""TODO-25: /todos allows 100 requests per user within 10 seconds, then answers 429."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10


def auth(email, password):
    r = requests.post(f"{BASE_URL}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['accessToken']}"}


def test_rate_limit_per_user():
    alice = auth("alice@example.com", "Alice123!")
    bob = auth("bob@example.com", "Bob123!")
    with requests.Session() as session:
        for n in range(1, 101):
            r = session.get(f"{BASE_URL}/todos", headers=alice, timeout=TIMEOUT)
            assert r.status_code == 200, n
        r = session.get(f"{BASE_URL}/todos", headers=alice, timeout=TIMEOUT)
        assert r.status_code == 429
        assert r.content == b""

        r = session.get(f"{BASE_URL}/todos", headers=bob, timeout=TIMEOUT)
        assert r.status_code == 200

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
API = BASE_URL + "/api/v1"
T = 10


def login(email, password):
    return requests.post(
        f"{API}/login/access-token", data={"username": email, "password": password}, timeout=T
    )


def auth(email, password):
    r = login(email, password)
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['access_token']}"}


def test_superuser_updates_a_users_full_name():
    admin = auth("admin@example.com", "changethis")
    alice = auth("alice@example.com", "alicepass123")
    alice_id = requests.get(f"{API}/users/me", headers=alice, timeout=T).json()["id"]
    r = requests.patch(f"{API}/users/{alice_id}", json={"full_name": "Alice Renamed"}, headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["full_name"] == "Alice Renamed"
    assert r.json()["email"] == "alice@example.com"
    assert r.json()["id"] == alice_id
    me = requests.get(f"{API}/users/me", headers=alice, timeout=T).json()
    assert me["full_name"] == "Alice Renamed"

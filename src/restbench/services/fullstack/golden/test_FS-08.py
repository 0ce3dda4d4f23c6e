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


def test_deactivated_users_token_stops_working_until_reactivated():
    alice = auth("alice@example.com", "alicepass123")
    admin = auth("admin@example.com", "changethis")
    alice_id = requests.get(f"{API}/users/me", headers=alice, timeout=T).json()["id"]
    r = requests.patch(f"{API}/users/{alice_id}", json={"is_active": False}, headers=admin, timeout=T)
    assert r.status_code == 200
    r = requests.get(f"{API}/users/me", headers=alice, timeout=T)
    assert r.status_code == 400
    assert r.json() == {"detail": "Inactive user"}
    r = requests.patch(f"{API}/users/{alice_id}", json={"is_active": True}, headers=admin, timeout=T)
    assert r.status_code == 200
    r = requests.get(f"{API}/users/me", headers=alice, timeout=T)
    assert r.status_code == 200
    assert r.json()["email"] == "alice@example.com"

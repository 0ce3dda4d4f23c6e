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


def test_profile_update_changes_only_the_keys_sent():
    headers = auth("alice@example.com", "alicepass123")
    r = requests.patch(f"{API}/users/me", json={"full_name": "Only Name"}, headers=headers, timeout=T)
    assert r.status_code == 200
    assert r.json()["full_name"] == "Only Name"
    assert r.json()["email"] == "alice@example.com"
    r = requests.patch(f"{API}/users/me", json={}, headers=headers, timeout=T)
    assert r.status_code == 200
    assert r.json()["full_name"] == "Only Name"
    assert r.json()["email"] == "alice@example.com"
    r = requests.patch(f"{API}/users/me", json={"full_name": None}, headers=headers, timeout=T)
    assert r.status_code == 200
    assert r.json()["full_name"] is None
    assert r.json()["email"] == "alice@example.com"

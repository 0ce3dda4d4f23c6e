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


def test_update_own_name_and_email():
    headers = auth("alice@example.com", "alicepass123")
    body = {"full_name": "Alice Updated", "email": "alice.new@example.com"}
    r = requests.patch(f"{API}/users/me", json=body, headers=headers, timeout=T)
    assert r.status_code == 200
    assert r.json()["full_name"] == "Alice Updated"
    assert r.json()["email"] == "alice.new@example.com"
    r = requests.get(f"{API}/users/me", headers=headers, timeout=T)
    assert r.json()["full_name"] == "Alice Updated"
    assert r.json()["email"] == "alice.new@example.com"
    assert login("alice.new@example.com", "alicepass123").status_code == 200
    assert login("alice@example.com", "alicepass123").status_code == 400

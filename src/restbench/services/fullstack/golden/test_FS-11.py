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


def test_signup_with_existing_email_is_rejected():
    body = {"email": "alice@example.com", "password": "another123", "full_name": "Other Alice"}
    r = requests.post(f"{API}/users/signup", json=body, timeout=T)
    assert r.status_code == 400
    assert r.json() == {"detail": "The user with this email already exists in the system"}
    alice = auth("alice@example.com", "alicepass123")
    assert login("alice@example.com", "another123").status_code == 400
    me = requests.get(f"{API}/users/me", headers=alice, timeout=T).json()
    assert me["full_name"] == "Alice Martin"
    assert me["is_active"] is True

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


def test_profile_email_must_stay_unique():
    headers = auth("alice@example.com", "alicepass123")
    r = requests.patch(f"{API}/users/me", json={"email": "bob@example.com"}, headers=headers, timeout=T)
    assert r.status_code == 409
    assert r.json() == {"detail": "User with this email already exists"}
    r = requests.get(f"{API}/users/me", headers=headers, timeout=T)
    assert r.json()["email"] == "alice@example.com"
    r = requests.patch(f"{API}/users/me", json={"email": "alice@example.com"}, headers=headers, timeout=T)
    assert r.status_code == 200
    assert r.json()["email"] == "alice@example.com"

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


def test_profile_update_cannot_grant_privileges():
    headers = auth("alice@example.com", "alicepass123")
    body = {"full_name": "Alice Admin", "is_superuser": True, "is_active": False}
    r = requests.patch(f"{API}/users/me", json=body, headers=headers, timeout=T)
    assert r.status_code == 200
    assert r.json()["full_name"] == "Alice Admin"
    assert r.json()["is_superuser"] is False
    assert r.json()["is_active"] is True
    r = requests.get(f"{API}/users/", headers=headers, timeout=T)
    assert r.status_code == 403

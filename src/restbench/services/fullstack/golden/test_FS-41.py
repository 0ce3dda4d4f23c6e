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


def test_superuser_can_demote_themself():
    admin = auth("admin@example.com", "changethis")
    admin_id = requests.get(f"{API}/users/me", headers=admin, timeout=T).json()["id"]
    r = requests.patch(f"{API}/users/{admin_id}", json={"is_superuser": False}, headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["is_superuser"] is False
    r = requests.get(f"{API}/users/", headers=admin, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "The user doesn't have enough privileges"}

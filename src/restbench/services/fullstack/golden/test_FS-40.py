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


def user_id(admin, email):
    users = requests.get(f"{API}/users/", headers=admin, timeout=T).json()["data"]
    return next(u["id"] for u in users if u["email"] == email)


def test_superuser_deactivates_and_reactivates_accounts():
    admin = auth("admin@example.com", "changethis")
    r = requests.patch(f"{API}/users/{user_id(admin, 'alice@example.com')}", json={"is_active": False}, headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["is_active"] is False
    r = login("alice@example.com", "alicepass123")
    assert r.status_code == 400
    assert r.json() == {"detail": "Inactive user"}
    r = requests.patch(f"{API}/users/{user_id(admin, 'carol@example.com')}", json={"is_active": True}, headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["is_active"] is True
    assert login("carol@example.com", "carolpass12").status_code == 200

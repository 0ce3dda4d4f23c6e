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


def test_read_own_profile():
    r = requests.get(f"{API}/users/me", headers=auth("alice@example.com", "alicepass123"), timeout=T)
    assert r.status_code == 200
    me = r.json()
    assert me["email"] == "alice@example.com"
    assert me["full_name"] == "Alice Martin"
    assert me["is_active"] is True
    assert me["is_superuser"] is False
    r = requests.get(f"{API}/users/me", headers=auth("admin@example.com", "changethis"), timeout=T)
    assert r.status_code == 200
    me = r.json()
    assert me["email"] == "admin@example.com"
    assert me["is_superuser"] is True
    assert me["full_name"] is None

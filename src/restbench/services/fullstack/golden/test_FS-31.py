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


def test_superuser_creates_superuser_and_inactive_user():
    admin = auth("admin@example.com", "changethis")
    body = {"email": "boss@example.com", "password": "bosspass123", "is_superuser": True}
    r = requests.post(f"{API}/users/", json=body, headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["is_superuser"] is True
    boss = auth("boss@example.com", "bosspass123")
    assert requests.get(f"{API}/users/", headers=boss, timeout=T).status_code == 200
    body = {"email": "sleepy@example.com", "password": "sleepypass1", "is_active": False}
    r = requests.post(f"{API}/users/", json=body, headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["is_active"] is False
    r = login("sleepy@example.com", "sleepypass1")
    assert r.status_code == 400
    assert r.json() == {"detail": "Inactive user"}

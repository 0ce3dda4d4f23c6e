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


def test_superuser_creates_normal_user():
    admin = auth("admin@example.com", "changethis")
    body = {"email": "carl@example.com", "password": "carlpass123", "full_name": "Carl New"}
    r = requests.post(f"{API}/users/", json=body, headers=admin, timeout=T)
    assert r.status_code == 200
    user = r.json()
    assert user["email"] == "carl@example.com"
    assert user["full_name"] == "Carl New"
    assert user["is_active"] is True
    assert user["is_superuser"] is False
    assert login("carl@example.com", "carlpass123").status_code == 200
    listing = requests.get(f"{API}/users/", headers=admin, timeout=T).json()
    assert listing["count"] == 6
    assert listing["data"][0]["email"] == "carl@example.com"

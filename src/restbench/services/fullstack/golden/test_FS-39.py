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


def test_superuser_sets_a_users_password():
    admin = auth("admin@example.com", "changethis")
    alice_id = requests.get(f"{API}/users/me", headers=auth("alice@example.com", "alicepass123"), timeout=T).json()["id"]
    r = requests.patch(f"{API}/users/{alice_id}", json={"password": "alicechanged1"}, headers=admin, timeout=T)
    assert r.status_code == 200
    assert "password" not in r.json()
    assert "hashed_password" not in r.json()
    assert login("alice@example.com", "alicepass123").status_code == 400
    assert login("alice@example.com", "alicechanged1").status_code == 200

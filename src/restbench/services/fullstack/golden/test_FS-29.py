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


def test_normal_user_cannot_list_or_create_users():
    alice = auth("alice@example.com", "alicepass123")
    r = requests.get(f"{API}/users/", headers=alice, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "The user doesn't have enough privileges"}
    body = {"email": "made.by.alice@example.com", "password": "somepass123"}
    r = requests.post(f"{API}/users/", json=body, headers=alice, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "The user doesn't have enough privileges"}
    admin = auth("admin@example.com", "changethis")
    assert requests.get(f"{API}/users/", headers=admin, timeout=T).json()["count"] == 5

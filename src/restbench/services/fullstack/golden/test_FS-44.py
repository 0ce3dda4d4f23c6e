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


UNKNOWN_ID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"


def test_delete_user_errors():
    admin = auth("admin@example.com", "changethis")
    admin_id = requests.get(f"{API}/users/me", headers=admin, timeout=T).json()["id"]
    alice = auth("alice@example.com", "alicepass123")
    bob_id = requests.get(f"{API}/users/me", headers=auth("bob@example.com", "bobpass1234"), timeout=T).json()["id"]
    r = requests.delete(f"{API}/users/{UNKNOWN_ID}", headers=admin, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "User not found"}
    r = requests.delete(f"{API}/users/{admin_id}", headers=admin, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "Super users are not allowed to delete themselves"}
    r = requests.delete(f"{API}/users/{bob_id}", headers=alice, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "The user doesn't have enough privileges"}
    assert requests.get(f"{API}/users/", headers=admin, timeout=T).json()["count"] == 5

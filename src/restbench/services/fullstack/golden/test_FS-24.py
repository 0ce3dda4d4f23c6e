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


def test_normal_user_deletes_own_account():
    bob = auth("bob@example.com", "bobpass1234")
    bob_id = requests.get(f"{API}/users/me", headers=bob, timeout=T).json()["id"]
    r = requests.delete(f"{API}/users/me", headers=bob, timeout=T)
    assert r.status_code == 200
    assert r.json() == {"message": "User deleted successfully"}
    r = login("bob@example.com", "bobpass1234")
    assert r.status_code == 400
    assert r.json() == {"detail": "Incorrect email or password"}
    admin = auth("admin@example.com", "changethis")
    r = requests.get(f"{API}/users/{bob_id}", headers=admin, timeout=T)
    assert r.status_code == 404

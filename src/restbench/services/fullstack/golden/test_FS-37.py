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


def test_update_user_errors():
    admin = auth("admin@example.com", "changethis")
    r = requests.patch(f"{API}/users/{UNKNOWN_ID}", json={"full_name": "Ghost"}, headers=admin, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "The user with this id does not exist in the system"}
    alice = auth("alice@example.com", "alicepass123")
    bob_id = requests.get(f"{API}/users/me", headers=auth("bob@example.com", "bobpass1234"), timeout=T).json()["id"]
    r = requests.patch(f"{API}/users/{bob_id}", json={"full_name": "Hacked"}, headers=alice, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "The user doesn't have enough privileges"}
    r = requests.get(f"{API}/users/{bob_id}", headers=admin, timeout=T)
    assert r.json()["full_name"] == "Bob Stone"

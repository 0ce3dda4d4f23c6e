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


def test_superuser_reads_any_user_by_id():
    admin = auth("admin@example.com", "changethis")
    bob = auth("bob@example.com", "bobpass1234")
    bob_id = requests.get(f"{API}/users/me", headers=bob, timeout=T).json()["id"]
    r = requests.get(f"{API}/users/{bob_id}", headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["id"] == bob_id
    assert r.json()["email"] == "bob@example.com"
    assert r.json()["full_name"] == "Bob Stone"
    r = requests.get(f"{API}/users/{UNKNOWN_ID}", headers=admin, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "User not found"}
    r = requests.get(f"{API}/users/not-a-uuid", headers=admin, timeout=T)
    assert r.status_code == 422

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


def test_superuser_deletes_a_user():
    admin = auth("admin@example.com", "changethis")
    bob_id = requests.get(f"{API}/users/me", headers=auth("bob@example.com", "bobpass1234"), timeout=T).json()["id"]
    r = requests.delete(f"{API}/users/{bob_id}", headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json() == {"message": "User deleted successfully"}
    r = requests.get(f"{API}/users/{bob_id}", headers=admin, timeout=T)
    assert r.status_code == 404
    assert requests.get(f"{API}/users/", headers=admin, timeout=T).json()["count"] == 4
    assert login("bob@example.com", "bobpass1234").status_code == 400

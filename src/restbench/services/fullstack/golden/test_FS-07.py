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


def test_token_of_deleted_user_yields_user_not_found():
    headers = auth("bob@example.com", "bobpass1234")
    r = requests.delete(f"{API}/users/me", headers=headers, timeout=T)
    assert r.status_code == 200
    r = requests.get(f"{API}/users/me", headers=headers, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "User not found"}

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


def test_inactive_user_cannot_log_in():
    r = login("carol@example.com", "carolpass12")
    assert r.status_code == 400
    assert r.json() == {"detail": "Inactive user"}
    r = login("carol@example.com", "wrongpassword")
    assert r.status_code == 400
    assert r.json() == {"detail": "Incorrect email or password"}

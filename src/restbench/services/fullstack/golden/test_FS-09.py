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


def test_signup_creates_active_normal_user_who_can_log_in():
    body = {"email": "newbie@example.com", "password": "newbiepass1", "full_name": "New Bie"}
    r = requests.post(f"{API}/users/signup", json=body, timeout=T)
    assert r.status_code == 200
    user = r.json()
    assert user["email"] == "newbie@example.com"
    assert user["full_name"] == "New Bie"
    assert user["is_active"] is True
    assert user["is_superuser"] is False
    assert user["id"]
    r = login("newbie@example.com", "newbiepass1")
    assert r.status_code == 200
    assert r.json()["access_token"]

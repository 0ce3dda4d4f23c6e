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


def test_signup_ignores_is_superuser():
    body = {"email": "sneaky@example.com", "password": "sneakypass1", "is_superuser": True}
    r = requests.post(f"{API}/users/signup", json=body, timeout=T)
    assert r.status_code == 200
    assert r.json()["is_superuser"] is False
    headers = auth("sneaky@example.com", "sneakypass1")
    r = requests.get(f"{API}/users/", headers=headers, timeout=T)
    assert r.status_code == 403

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


def test_superuser_cannot_create_duplicate_email():
    admin = auth("admin@example.com", "changethis")
    body = {"email": "bob@example.com", "password": "otherbob123"}
    r = requests.post(f"{API}/users/", json=body, headers=admin, timeout=T)
    assert r.status_code == 400
    assert r.json() == {"detail": "The user with this email already exists in the system."}
    assert requests.get(f"{API}/users/", headers=admin, timeout=T).json()["count"] == 5
    r = requests.get(f"{API}/utils/sent-emails/", headers=admin, params={"email_to": "bob@example.com"}, timeout=T)
    assert r.json()["count"] == 0

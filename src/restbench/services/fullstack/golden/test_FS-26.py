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


def test_superuser_cannot_delete_self_via_me():
    admin = auth("admin@example.com", "changethis")
    r = requests.delete(f"{API}/users/me", headers=admin, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "Super users are not allowed to delete themselves"}
    assert login("admin@example.com", "changethis").status_code == 200

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
    admin = auth("admin@example.com", "changethis")
    r = requests.get(f"{API}/items/", headers=admin, timeout=T)
    assert r.json()["count"] == 7
    assert "Admin checklist" in [item["title"] for item in r.json()["data"]]

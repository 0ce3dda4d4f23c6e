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


def test_superuser_lists_all_users_newest_first():
    admin = auth("admin@example.com", "changethis")
    r = requests.get(f"{API}/users/", headers=admin, timeout=T)
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 5
    assert [u["email"] for u in body["data"]] == [
        "dave@example.com",
        "carol@example.com",
        "bob@example.com",
        "alice@example.com",
        "admin@example.com",
    ]
    for user in body["data"]:
        assert "password" not in user
        assert "hashed_password" not in user

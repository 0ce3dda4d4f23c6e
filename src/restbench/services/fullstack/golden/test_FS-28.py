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


def get(headers, params):
    r = requests.get(f"{API}/users/", headers=headers, params=params, timeout=T)
    assert r.status_code == 200
    return r.json()


def test_users_pagination_with_total_count():
    admin = auth("admin@example.com", "changethis")
    page = get(admin, {"skip": 1, "limit": 2})
    assert [u["email"] for u in page["data"]] == ["carol@example.com", "bob@example.com"]
    assert page["count"] == 5
    page = get(admin, {"skip": 4, "limit": 10})
    assert [u["email"] for u in page["data"]] == ["admin@example.com"]
    assert page["count"] == 5
    page = get(admin, {"limit": 0})
    assert page["data"] == []
    assert page["count"] == 5

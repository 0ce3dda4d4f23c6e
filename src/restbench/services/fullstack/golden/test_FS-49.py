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


def page(headers, **params):
    r = requests.get(f"{API}/items/", headers=headers, params=params, timeout=T)
    assert r.status_code == 200
    return r.json()


def test_items_pagination_keeps_total_count():
    alice = auth("alice@example.com", "alicepass123")
    body = page(alice, skip=1, limit=1)
    assert [i["title"] for i in body["data"]] == ["Book club notes"]
    assert body["count"] == 3
    body = page(alice, skip=3)
    assert body["data"] == [] and body["count"] == 3
    body = page(alice, limit=0)
    assert body["data"] == [] and body["count"] == 3
    admin = auth("admin@example.com", "changethis")
    body = page(admin, skip=5, limit=5)
    assert [i["title"] for i in body["data"]] == ["Grocery list", "Admin checklist"]
    assert body["count"] == 7

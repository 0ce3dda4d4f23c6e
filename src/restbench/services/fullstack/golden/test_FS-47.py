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


def test_normal_user_lists_only_own_items():
    alice = auth("alice@example.com", "alicepass123")
    alice_id = requests.get(f"{API}/users/me", headers=alice, timeout=T).json()["id"]
    r = requests.get(f"{API}/items/", headers=alice, timeout=T)
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 3
    assert [i["title"] for i in body["data"]] == ["Garden plan", "Book club notes", "Grocery list"]
    assert all(i["owner_id"] == alice_id for i in body["data"])
    r = requests.get(f"{API}/items/", headers=auth("dave@example.com", "davepass123"), timeout=T)
    assert r.status_code == 200
    assert r.json() == {"data": [], "count": 0}

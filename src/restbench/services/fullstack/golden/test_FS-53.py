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


def test_owner_updates_item():
    alice = auth("alice@example.com", "alicepass123")
    item = next(i for i in requests.get(f"{API}/items/", headers=alice, timeout=T).json()["data"] if i["title"] == "Grocery list")
    body = {"title": "Groceries v2", "description": "Oat milk"}
    r = requests.put(f"{API}/items/{item['id']}", json=body, headers=alice, timeout=T)
    assert r.status_code == 200
    updated = r.json()
    assert updated["title"] == "Groceries v2"
    assert updated["description"] == "Oat milk"
    assert updated["id"] == item["id"]
    assert updated["owner_id"] == item["owner_id"]
    assert updated["created_at"] == item["created_at"]
    r = requests.get(f"{API}/items/{item['id']}", headers=alice, timeout=T)
    assert r.json()["title"] == "Groceries v2"
    assert r.json()["description"] == "Oat milk"

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


def test_create_item_owned_by_caller():
    alice = auth("alice@example.com", "alicepass123")
    alice_id = requests.get(f"{API}/users/me", headers=alice, timeout=T).json()["id"]
    r = requests.post(f"{API}/items/", json={"title": "New item", "description": "Fresh"}, headers=alice, timeout=T)
    assert r.status_code == 200
    item = r.json()
    assert item["title"] == "New item"
    assert item["description"] == "Fresh"
    assert item["owner_id"] == alice_id
    assert item["id"]
    r = requests.get(f"{API}/items/{item['id']}", headers=alice, timeout=T)
    assert r.status_code == 200
    assert r.json()["title"] == "New item"
    assert r.json()["description"] == "Fresh"
    assert r.json()["owner_id"] == alice_id

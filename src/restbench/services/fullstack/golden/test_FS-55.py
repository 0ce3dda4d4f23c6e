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


UNKNOWN_ID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"


def test_updating_foreign_or_unknown_item():
    alice = auth("alice@example.com", "alicepass123")
    bob = auth("bob@example.com", "bobpass1234")
    admin = auth("admin@example.com", "changethis")
    item = next(i for i in requests.get(f"{API}/items/", headers=alice, timeout=T).json()["data"] if i["title"] == "Grocery list")
    url = f"{API}/items/{item['id']}"
    r = requests.put(url, json={"title": "Bob was here"}, headers=bob, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "Not enough permissions"}
    assert requests.get(url, headers=alice, timeout=T).json()["title"] == "Grocery list"
    r = requests.put(f"{API}/items/{UNKNOWN_ID}", json={"title": "x"}, headers=bob, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "Item not found"}
    r = requests.put(url, json={"title": "Admin edit"}, headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json()["title"] == "Admin edit"
    assert r.json()["owner_id"] == item["owner_id"]

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


def test_reading_foreign_or_unknown_item():
    alice = auth("alice@example.com", "alicepass123")
    bob = auth("bob@example.com", "bobpass1234")
    item_id = requests.get(f"{API}/items/", headers=alice, timeout=T).json()["data"][0]["id"]
    r = requests.get(f"{API}/items/{item_id}", headers=bob, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "Not enough permissions"}
    r = requests.get(f"{API}/items/{UNKNOWN_ID}", headers=bob, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "Item not found"}
    r = requests.get(f"{API}/items/not-a-uuid", headers=bob, timeout=T)
    assert r.status_code == 422

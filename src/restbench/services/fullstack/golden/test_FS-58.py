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


def test_deleting_foreign_or_unknown_item():
    alice = auth("alice@example.com", "alicepass123")
    bob = auth("bob@example.com", "bobpass1234")
    admin = auth("admin@example.com", "changethis")
    item_id = requests.get(f"{API}/items/", headers=alice, timeout=T).json()["data"][0]["id"]
    r = requests.delete(f"{API}/items/{item_id}", headers=bob, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "Not enough permissions"}
    assert requests.get(f"{API}/items/{item_id}", headers=alice, timeout=T).status_code == 200
    r = requests.delete(f"{API}/items/{UNKNOWN_ID}", headers=bob, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "Item not found"}
    r = requests.delete(f"{API}/items/{item_id}", headers=admin, timeout=T)
    assert r.status_code == 200
    assert requests.get(f"{API}/items/{item_id}", headers=admin, timeout=T).status_code == 404

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


def test_owner_deletes_item():
    alice = auth("alice@example.com", "alicepass123")
    item_id = requests.get(f"{API}/items/", headers=alice, timeout=T).json()["data"][0]["id"]
    r = requests.delete(f"{API}/items/{item_id}", headers=alice, timeout=T)
    assert r.status_code == 200
    assert r.json() == {"message": "Item deleted successfully"}
    r = requests.get(f"{API}/items/{item_id}", headers=alice, timeout=T)
    assert r.status_code == 404
    assert requests.get(f"{API}/items/", headers=alice, timeout=T).json()["count"] == 2

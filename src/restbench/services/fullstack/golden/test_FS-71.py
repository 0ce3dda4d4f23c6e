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


def test_item_visibility_across_users_and_admin():
    alice = auth("alice@example.com", "alicepass123")
    bob = auth("bob@example.com", "bobpass1234")
    admin = auth("admin@example.com", "changethis")
    r = requests.post(f"{API}/items/", json={"title": "Shared secret"}, headers=alice, timeout=T)
    assert r.status_code == 200
    item_id = r.json()["id"]
    bob_list = requests.get(f"{API}/items/", headers=bob, timeout=T).json()
    assert bob_list["count"] == 2
    assert item_id not in [i["id"] for i in bob_list["data"]]
    assert requests.get(f"{API}/items/{item_id}", headers=bob, timeout=T).status_code == 403
    admin_list = requests.get(f"{API}/items/", headers=admin, timeout=T).json()
    assert admin_list["count"] == 8
    assert admin_list["data"][0]["id"] == item_id
    r = requests.put(f"{API}/items/{item_id}", json={"description": "seen by admin"}, headers=admin, timeout=T)
    assert r.status_code == 200
    r = requests.get(f"{API}/items/{item_id}", headers=alice, timeout=T)
    assert r.status_code == 200
    assert r.json()["description"] == "seen by admin"
    assert requests.delete(f"{API}/items/{item_id}", headers=alice, timeout=T).status_code == 200
    assert requests.get(f"{API}/items/", headers=admin, timeout=T).json()["count"] == 7

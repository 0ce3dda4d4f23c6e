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


def test_owner_and_superuser_read_an_item():
    alice = auth("alice@example.com", "alicepass123")
    alice_id = requests.get(f"{API}/users/me", headers=alice, timeout=T).json()["id"]
    item = next(i for i in requests.get(f"{API}/items/", headers=alice, timeout=T).json()["data"] if i["title"] == "Grocery list")
    for headers in (alice, auth("admin@example.com", "changethis")):
        r = requests.get(f"{API}/items/{item['id']}", headers=headers, timeout=T)
        assert r.status_code == 200
        assert r.json()["id"] == item["id"]
        assert r.json()["title"] == "Grocery list"
        assert r.json()["description"] == "Milk, eggs, bread"
        assert r.json()["owner_id"] == alice_id

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


def test_item_update_validation():
    alice = auth("alice@example.com", "alicepass123")
    item = next(i for i in requests.get(f"{API}/items/", headers=alice, timeout=T).json()["data"] if i["title"] == "Grocery list")
    url = f"{API}/items/{item['id']}"
    for body in ({"title": ""}, {"title": None}, {"title": "x" * 256}, {"description": "d" * 256}):
        r = requests.put(url, json=body, headers=alice, timeout=T)
        assert r.status_code == 422, body
        assert [e["loc"] for e in r.json()["detail"]] == [["body", *body]], body
    r = requests.get(url, headers=alice, timeout=T)
    assert r.json()["title"] == "Grocery list"
    assert r.json()["description"] == "Milk, eggs, bread"

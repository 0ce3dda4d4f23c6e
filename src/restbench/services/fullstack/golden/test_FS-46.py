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


def test_create_item_validation():
    alice = auth("alice@example.com", "alicepass123")
    for body in ({"title": ""}, {}, {"title": "x" * 256}, {"title": "ok", "description": "d" * 256}):
        r = requests.post(f"{API}/items/", json=body, headers=alice, timeout=T)
        assert r.status_code == 422, body
    r = requests.post(f"{API}/items/", json={"title": "t" * 255}, headers=alice, timeout=T)
    assert r.status_code == 200
    assert r.json()["description"] is None

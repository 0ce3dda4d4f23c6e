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


def test_deleting_a_user_deletes_their_items():
    admin = auth("admin@example.com", "changethis")
    bob = auth("bob@example.com", "bobpass1234")
    bob_id = requests.get(f"{API}/users/me", headers=bob, timeout=T).json()["id"]
    items = requests.get(f"{API}/items/", headers=bob, timeout=T).json()["data"]
    assert len(items) == 2
    r = requests.delete(f"{API}/users/{bob_id}", headers=admin, timeout=T)
    assert r.status_code == 200
    for item in items:
        r = requests.get(f"{API}/items/{item['id']}", headers=admin, timeout=T)
        assert r.status_code == 404
    assert requests.get(f"{API}/items/", headers=admin, timeout=T).json()["count"] == 5

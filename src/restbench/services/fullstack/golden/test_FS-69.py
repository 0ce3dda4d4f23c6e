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


def test_new_user_lifecycle():
    body = {"email": "lifecycle@example.com", "password": "lifecycle123", "full_name": "Life Cycle"}
    r = requests.post(f"{API}/users/signup", json=body, timeout=T)
    assert r.status_code == 200
    assert r.json()["full_name"] == "Life Cycle"
    me = auth("lifecycle@example.com", "lifecycle123")
    first = requests.post(f"{API}/items/", json={"title": "First"}, headers=me, timeout=T)
    assert first.status_code == 200
    second = requests.post(f"{API}/items/", json={"title": "Second", "description": "two"}, headers=me, timeout=T)
    assert second.status_code == 200
    listing = requests.get(f"{API}/items/", headers=me, timeout=T).json()
    assert listing["count"] == 2
    assert [i["title"] for i in listing["data"]] == ["Second", "First"]
    r = requests.put(f"{API}/items/{first.json()['id']}", json={"title": "First edited"}, headers=me, timeout=T)
    assert r.status_code == 200
    r = requests.delete(f"{API}/items/{second.json()['id']}", headers=me, timeout=T)
    assert r.status_code == 200
    listing = requests.get(f"{API}/items/", headers=me, timeout=T).json()
    assert listing["count"] == 1
    assert [i["title"] for i in listing["data"]] == ["First edited"]
    r = requests.delete(f"{API}/users/me", headers=me, timeout=T)
    assert r.status_code == 200
    admin = auth("admin@example.com", "changethis")
    assert requests.get(f"{API}/items/{first.json()['id']}", headers=admin, timeout=T).status_code == 404
    assert requests.get(f"{API}/items/", headers=admin, timeout=T).json()["count"] == 7

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


def test_admin_managed_account_lifecycle():
    admin = auth("admin@example.com", "changethis")
    r = requests.post(f"{API}/users/", json={"email": "temp@example.com", "password": "temppass123"}, headers=admin, timeout=T)
    assert r.status_code == 200
    temp_id = r.json()["id"]
    temp = auth("temp@example.com", "temppass123")
    r = requests.post(f"{API}/items/", json={"title": "Temp item"}, headers=temp, timeout=T)
    assert r.status_code == 200
    item_id = r.json()["id"]
    listing = requests.get(f"{API}/items/", headers=admin, timeout=T).json()
    assert listing["count"] == 8
    assert listing["data"][0]["title"] == "Temp item"
    r = requests.patch(f"{API}/users/{temp_id}", json={"is_active": False}, headers=admin, timeout=T)
    assert r.status_code == 200
    r = requests.get(f"{API}/items/", headers=temp, timeout=T)
    assert r.status_code == 400
    assert r.json() == {"detail": "Inactive user"}
    listing = requests.get(f"{API}/items/", headers=admin, timeout=T).json()
    assert listing["count"] == 8
    assert listing["data"][0]["title"] == "Temp item"
    r = requests.delete(f"{API}/users/{temp_id}", headers=admin, timeout=T)
    assert r.status_code == 200
    assert requests.get(f"{API}/items/{item_id}", headers=admin, timeout=T).status_code == 404
    assert requests.get(f"{API}/users/", headers=admin, timeout=T).json()["count"] == 5

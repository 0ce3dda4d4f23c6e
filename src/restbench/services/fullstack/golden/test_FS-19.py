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


def test_profile_update_validation():
    headers = auth("alice@example.com", "alicepass123")
    for body in ({"email": "not-an-email"}, {"email": None}, {"full_name": "x" * 256}):
        r = requests.patch(f"{API}/users/me", json=body, headers=headers, timeout=T)
        assert r.status_code == 422, body
        assert [e["loc"] for e in r.json()["detail"]] == [["body", *body]], body
    r = requests.get(f"{API}/users/me", headers=headers, timeout=T)
    assert r.json()["email"] == "alice@example.com"
    assert r.json()["full_name"] == "Alice Martin"

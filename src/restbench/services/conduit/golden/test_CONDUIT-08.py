import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
BOB = {
    "username": "bob",
    "email": "bob@conduit.test",
    "bio": "Backend engineer.",
    "image": "https://images.conduit.test/bob.png",
}


def login(email, password):
    body = {"user": {"email": email, "password": password}}
    return requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10)


def account(response):
    user = response.json()["user"]
    return {field: user.get(field) for field in BOB}


def test_change_password():
    token = login("bob@conduit.test", "bob-password").json()["user"]["token"]
    resp = requests.put(
        f"{BASE_URL}/api/user",
        json={"user": {"password": "new-bob-password"}},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert resp.status_code == 200
    assert account(resp) == BOB

    assert login("bob@conduit.test", "bob-password").status_code == 401
    fresh = login("bob@conduit.test", "new-bob-password")
    assert fresh.status_code == 200
    assert account(fresh) == BOB

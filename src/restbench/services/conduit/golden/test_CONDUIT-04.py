import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def login(email, password):
    body = {"user": {"email": email, "password": password}}
    return requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10)


def test_login_returns_user_and_token():
    resp = login("bob@conduit.test", "bob-password")
    assert resp.status_code == 200
    user = resp.json()["user"]
    assert user["username"] == "bob"
    assert user["email"] == "bob@conduit.test"
    assert user["bio"] == "Backend engineer."
    assert user["image"] == "https://images.conduit.test/bob.png"
    assert isinstance(user["token"], str) and user["token"]

    me = requests.get(
        f"{BASE_URL}/api/user", headers={"Authorization": f"Token {user['token']}"}, timeout=10
    )
    assert me.status_code == 200
    assert me.json()["user"]["username"] == "bob"

    mixed_case = login("Bob@Conduit.TEST", "bob-password")
    assert mixed_case.status_code == 200
    assert mixed_case.json()["user"]["username"] == "bob"

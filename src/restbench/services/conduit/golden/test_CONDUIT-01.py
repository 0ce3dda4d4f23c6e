import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_register_returns_user_with_working_token():
    new_user = {"username": "erin", "email": "erin@conduit.test", "password": "erin-password"}
    resp = requests.post(f"{BASE_URL}/api/users", json={"user": new_user}, timeout=10)
    assert resp.status_code == 201
    user = resp.json()["user"]
    assert user["username"] == "erin"
    assert user["email"] == "erin@conduit.test"
    assert user["bio"] == ""
    assert user["image"] == ""
    assert isinstance(user["token"], str) and user["token"]

    me = requests.get(
        f"{BASE_URL}/api/user", headers={"Authorization": f"Token {user['token']}"}, timeout=10
    )
    assert me.status_code == 200
    assert me.json()["user"]["username"] == "erin"
    assert me.json()["user"]["email"] == "erin@conduit.test"

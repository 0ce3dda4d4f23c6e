import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def login(email, password):
    body = {"user": {"email": email, "password": password}}
    return requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10)


def test_change_password():
    token = login("dave@conduit.test", "dave-password").json()["user"]["token"]
    resp = requests.put(
        f"{BASE_URL}/api/user",
        json={"user": {"password": "new-dave-password"}},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert resp.status_code == 200

    assert login("dave@conduit.test", "dave-password").status_code == 401
    fresh = login("dave@conduit.test", "new-dave-password")
    assert fresh.status_code == 200
    assert fresh.json()["user"]["username"] == "dave"

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def current_user(headers):
    return requests.get(f"{BASE_URL}/api/user", headers=headers, timeout=10)


def test_current_user_requires_a_valid_token():
    resp = requests.post(
        f"{BASE_URL}/api/users/login",
        json={"user": {"email": "alice@conduit.test", "password": "alice-password"}},
        timeout=10,
    )
    token = resp.json()["user"]["token"]

    me = current_user({"Authorization": f"Token {token}"})
    assert me.status_code == 200
    user = me.json()["user"]
    assert user["username"] == "alice"
    assert user["email"] == "alice@conduit.test"
    assert user["bio"] == "Writes about dragons and databases."
    assert user["image"] == "https://images.conduit.test/alice.png"
    assert user["token"] == token

    assert current_user({}).status_code == 401
    assert current_user({"Authorization": "Token not-a-jwt"}).status_code == 401

    header, payload, signature = token.split(".")
    forged_signature = ("B" if signature[0] == "A" else "A") + signature[1:]
    forged = f"{header}.{payload}.{forged_signature}"
    assert current_user({"Authorization": f"Token {forged}"}).status_code == 401

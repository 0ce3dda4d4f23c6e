import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def token_of(email, password):
    body = {"user": {"email": email, "password": password}}
    resp = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10)
    return resp.json()["user"]["token"]


def profile(username, token=None):
    headers = {"Authorization": f"Token {token}"} if token else {}
    return requests.get(f"{BASE_URL}/api/profiles/{username}", headers=headers, timeout=10)


def test_get_profile():
    resp = profile("bob")
    assert resp.status_code == 200
    assert resp.json() == {
        "profile": {
            "username": "bob",
            "bio": "Backend engineer.",
            "image": "https://images.conduit.test/bob.png",
            "following": False,
        }
    }

    as_alice = profile("bob", token_of("alice@conduit.test", "alice-password"))
    assert as_alice.status_code == 200
    assert as_alice.json()["profile"]["following"] is True

    as_dave = profile("bob", token_of("dave@conduit.test", "dave-password"))
    assert as_dave.status_code == 200
    assert as_dave.json()["profile"]["following"] is False

    assert profile("nobody").status_code == 404

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def register(username, email, password):
    user = {"username": username, "email": email, "password": password}
    return requests.post(f"{BASE_URL}/api/users", json={"user": user}, timeout=10)


def test_duplicate_username_and_email_are_rejected():
    resp = register("alice", "alice2@conduit.test", "secret-1")
    assert resp.status_code == 422
    assert "has already been taken" in resp.json()["errors"]["username"]

    resp = register("bobby", "BOB@conduit.test", "secret-2")
    assert resp.status_code == 422
    assert "has already been taken" in resp.json()["errors"]["email"]

    login = requests.post(
        f"{BASE_URL}/api/users/login",
        json={"user": {"email": "alice2@conduit.test", "password": "secret-1"}},
        timeout=10,
    )
    assert login.status_code == 401
    assert requests.get(f"{BASE_URL}/api/profiles/bobby", timeout=10).status_code == 404

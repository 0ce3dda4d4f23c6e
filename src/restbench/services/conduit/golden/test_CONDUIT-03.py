import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def register(user):
    return requests.post(f"{BASE_URL}/api/users", json={"user": user}, timeout=10)


def test_registration_validates_fields():
    resp = register({"username": "   ", "email": "frank@conduit.test", "password": "frank-pw"})
    assert resp.status_code == 422
    assert "can't be blank" in resp.json()["errors"]["username"]

    resp = register({"username": "frank", "email": "not-an-email", "password": "frank-pw"})
    assert resp.status_code == 422
    assert "is invalid" in resp.json()["errors"]["email"]

    resp = register({"username": "frank", "email": "frank@conduit.test"})
    assert resp.status_code == 422
    assert "password" in resp.json()["errors"]

    assert requests.get(f"{BASE_URL}/api/profiles/frank", timeout=10).status_code == 404
    login = requests.post(
        f"{BASE_URL}/api/users/login",
        json={"user": {"email": "frank@conduit.test", "password": "frank-pw"}},
        timeout=10,
    )
    assert login.status_code == 401

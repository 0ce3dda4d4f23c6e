import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
REFUSAL = {"errors": {"email or password": ["is invalid"]}}


def login(email, password):
    body = {"user": {"email": email, "password": password}}
    return requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10)


def test_login_rejects_bad_credentials():
    wrong_password = login("alice@conduit.test", "not-alice-password")
    assert wrong_password.status_code == 401
    assert wrong_password.json() == REFUSAL

    unknown = login("nobody@conduit.test", "whatever")
    assert unknown.status_code == 401
    assert unknown.json() == REFUSAL

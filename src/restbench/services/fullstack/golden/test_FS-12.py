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


def test_signup_validation_errors():
    cases = [
        ({"email": "shorty@example.com", "password": "short77"}, "password"),
        ({"email": "not-an-email", "password": "longenough1"}, "email"),
        ({"email": "nopass@example.com"}, "password"),
        ({"email": "toolong@example.com", "password": "x" * 129}, "password"),
    ]
    for body, field in cases:
        r = requests.post(f"{API}/users/signup", json=body, timeout=T)
        assert r.status_code == 422, body
        assert [e["loc"] for e in r.json()["detail"]] == [["body", field]], body
    admin = auth("admin@example.com", "changethis")
    r = requests.get(f"{API}/users/", headers=admin, timeout=T)
    assert r.json()["count"] == 5

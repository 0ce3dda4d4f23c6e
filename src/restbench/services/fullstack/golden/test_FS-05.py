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


def test_requests_without_token_are_unauthenticated():
    for method, path in (("GET", "/users/me"), ("GET", "/items/"), ("POST", "/login/test-token")):
        r = requests.request(method, f"{API}{path}", timeout=T)
        assert r.status_code == 401, (method, path)
        assert r.json() == {"detail": "Not authenticated"}
        assert r.headers.get("WWW-Authenticate") == "Bearer"

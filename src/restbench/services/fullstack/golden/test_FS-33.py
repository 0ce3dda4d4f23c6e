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


def test_create_user_validation():
    admin = auth("admin@example.com", "changethis")
    cases = (
        ({"email": "weak@example.com", "password": "1234567"}, "password"),
        ({"email": "nope", "password": "goodpass123"}, "email"),
        ({"password": "goodpass123"}, "email"),
    )
    for body, field in cases:
        r = requests.post(f"{API}/users/", json=body, headers=admin, timeout=T)
        assert r.status_code == 422, body
        assert [e["loc"] for e in r.json()["detail"]] == [["body", field]], body
    assert requests.get(f"{API}/users/", headers=admin, timeout=T).json()["count"] == 5

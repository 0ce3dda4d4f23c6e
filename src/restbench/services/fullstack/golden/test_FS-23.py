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


def test_change_password_validation():
    headers = auth("alice@example.com", "alicepass123")
    cases = (
        ({"current_password": "alicepass123", "new_password": "short77"}, "new_password"),
        ({"new_password": "alicenewpass1"}, "current_password"),
    )
    for body, field in cases:
        r = requests.patch(f"{API}/users/me/password", json=body, headers=headers, timeout=T)
        assert r.status_code == 422, body
        assert [e["loc"] for e in r.json()["detail"]] == [["body", field]], body
    assert login("alice@example.com", "alicepass123").status_code == 200

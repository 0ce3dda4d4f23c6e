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


def test_negative_or_non_integer_paging_is_rejected():
    alice = auth("alice@example.com", "alicepass123")
    admin = auth("admin@example.com", "changethis")
    for path, headers, params in (
        ("/items/", alice, {"skip": -1}),
        ("/items/", alice, {"limit": -5}),
        ("/items/", alice, {"skip": "abc"}),
        ("/users/", admin, {"skip": -1}),
        ("/users/", admin, {"limit": -1}),
    ):
        r = requests.get(f"{API}{path}", headers=headers, params=params, timeout=T)
        assert r.status_code == 422, (path, params)
        assert [e["loc"] for e in r.json()["detail"]] == [["query", *params]], (path, params)

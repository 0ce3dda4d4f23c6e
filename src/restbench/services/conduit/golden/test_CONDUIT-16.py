import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_slug_is_derived_from_title():
    body = {"user": {"email": "bob@conduit.test", "password": "bob-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    title = "Hello, World! SQLite & You (2024)"
    resp = requests.post(
        f"{BASE_URL}/api/articles",
        json={"article": {"title": title, "description": "d", "body": "b"}},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert resp.status_code == 201
    assert resp.json()["article"]["slug"] == "hello-world-sqlite-you-2024"

    fetched = requests.get(f"{BASE_URL}/api/articles/hello-world-sqlite-you-2024", timeout=10)
    assert fetched.status_code == 200
    assert fetched.json()["article"]["title"] == title

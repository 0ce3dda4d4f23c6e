import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_create_article_requires_auth_and_fields():
    article = {"title": "Unsigned", "description": "d", "body": "b"}
    anonymous = requests.post(f"{BASE_URL}/api/articles", json={"article": article}, timeout=10)
    assert anonymous.status_code == 401

    body = {"user": {"email": "alice@conduit.test", "password": "alice-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    no_title = requests.post(
        f"{BASE_URL}/api/articles",
        json={"article": {"description": "d", "body": "b"}},
        headers=headers,
        timeout=10,
    )
    assert no_title.status_code == 422
    assert "title" in no_title.json()["errors"]

    blank_body = requests.post(
        f"{BASE_URL}/api/articles",
        json={"article": {"title": "Blank", "description": "d", "body": "   "}},
        headers=headers,
        timeout=10,
    )
    assert blank_body.status_code == 422
    assert "body" in blank_body.json()["errors"]

    listing = requests.get(f"{BASE_URL}/api/articles", params={"author": "alice"}, timeout=10)
    assert listing.json()["articlesCount"] == 2

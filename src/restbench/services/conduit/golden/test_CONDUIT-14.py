import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_create_article():
    body = {"user": {"email": "alice@conduit.test", "password": "alice-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    new = {
        "title": "Caring for Baby Dragons",
        "description": "Tips for new owners",
        "body": "Keep them warm.",
        "tagList": ["dragons", "care"],
    }
    resp = requests.post(
        f"{BASE_URL}/api/articles",
        json={"article": new},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert resp.status_code == 201
    article = resp.json()["article"]
    assert article["slug"] == "caring-for-baby-dragons"
    assert article["title"] == "Caring for Baby Dragons"
    assert article["description"] == "Tips for new owners"
    assert article["body"] == "Keep them warm."
    assert article["tagList"] == ["dragons", "care"]
    assert article["favorited"] is False
    assert article["favoritesCount"] == 0
    assert article["author"]["username"] == "alice"
    assert article["author"]["following"] is False

    fetched = requests.get(f"{BASE_URL}/api/articles/caring-for-baby-dragons", timeout=10)
    assert fetched.status_code == 200
    stored = fetched.json()["article"]
    assert stored["title"] == "Caring for Baby Dragons"
    assert stored["description"] == "Tips for new owners"
    assert stored["body"] == "Keep them warm."
    assert stored["tagList"] == ["dragons", "care"]
    assert stored["author"]["username"] == "alice"

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
SLUG = "sqlite-in-production"


def token_of(email, password):
    body = {"user": {"email": email, "password": password}}
    resp = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10)
    return resp.json()["user"]["token"]


def get_article(slug, token=None):
    headers = {"Authorization": f"Token {token}"} if token else {}
    return requests.get(f"{BASE_URL}/api/articles/{slug}", headers=headers, timeout=10)


def test_get_single_article():
    resp = get_article(SLUG)
    assert resp.status_code == 200
    article = resp.json()["article"]
    assert article["slug"] == SLUG
    assert article["title"] == "SQLite in Production"
    assert article["description"] == "It scales further than you think."
    assert article["body"] == "Turn on WAL and measure."
    assert article["tagList"] == ["databases", "sqlite"]
    assert article["createdAt"] == "2024-02-14T09:00:00.000Z"
    assert article["favorited"] is False
    assert article["favoritesCount"] == 2
    assert article["author"]["username"] == "bob"
    assert article["author"]["following"] is False

    as_carol = get_article(SLUG, token_of("carol@conduit.test", "carol-password")).json()["article"]
    assert as_carol["favorited"] is True
    assert as_carol["author"]["following"] is False

    as_alice = get_article(SLUG, token_of("alice@conduit.test", "alice-password")).json()["article"]
    assert as_alice["favorited"] is True
    assert as_alice["author"]["following"] is True

    as_dave = get_article(SLUG, token_of("dave@conduit.test", "dave-password")).json()["article"]
    assert as_dave["favorited"] is False

    assert get_article("no-such-article").status_code == 404

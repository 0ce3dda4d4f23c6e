import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
ARTICLE = f"{BASE_URL}/api/articles/sqlite-in-production"


def token_of(email, password):
    body = {"user": {"email": email, "password": password}}
    return requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]


def test_unfavorite_an_article():
    alice = {"Authorization": f"Token {token_of('alice@conduit.test', 'alice-password')}"}

    resp = requests.delete(f"{ARTICLE}/favorite", headers=alice, timeout=10)
    assert resp.status_code == 200
    assert resp.json()["article"]["favorited"] is False
    assert resp.json()["article"]["favoritesCount"] == 1

    seen = requests.get(ARTICLE, headers=alice, timeout=10).json()["article"]
    assert seen["favorited"] is False
    assert seen["favoritesCount"] == 1

    listed = requests.get(f"{BASE_URL}/api/articles", params={"favorited": "alice"}, timeout=10).json()
    assert [a["slug"] for a in listed["articles"]] == ["dragons-of-the-north"]
    assert listed["articlesCount"] == 1

    carol = {"Authorization": f"Token {token_of('carol@conduit.test', 'carol-password')}"}
    assert requests.get(ARTICLE, headers=carol, timeout=10).json()["article"]["favorited"] is True

    again = requests.delete(f"{ARTICLE}/favorite", headers=alice, timeout=10)
    assert again.status_code == 200
    assert again.json()["article"]["favoritesCount"] == 1

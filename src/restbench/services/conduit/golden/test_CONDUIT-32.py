import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
ARTICLE = f"{BASE_URL}/api/articles/welcome-to-conduit"


def test_favorite_an_article():
    body = {"user": {"email": "dave@conduit.test", "password": "dave-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    resp = requests.post(f"{ARTICLE}/favorite", headers=headers, timeout=10)
    assert resp.status_code == 200
    article = resp.json()["article"]
    assert article["slug"] == "welcome-to-conduit"
    assert article["favorited"] is True
    assert article["favoritesCount"] == 1

    mine = requests.get(ARTICLE, headers=headers, timeout=10).json()["article"]
    assert mine["favorited"] is True
    assert mine["favoritesCount"] == 1
    assert requests.get(ARTICLE, timeout=10).json()["article"]["favoritesCount"] == 1

    again = requests.post(f"{ARTICLE}/favorite", headers=headers, timeout=10)
    assert again.status_code == 200
    assert again.json()["article"]["favoritesCount"] == 1

    listed = requests.get(f"{BASE_URL}/api/articles", params={"favorited": "dave"}, timeout=10).json()
    assert [a["slug"] for a in listed["articles"]] == ["welcome-to-conduit"]

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_feed_contains_exactly_followed_authors():
    body = {"user": {"email": "carol@conduit.test", "password": "carol-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    follow = requests.post(f"{BASE_URL}/api/profiles/bob/follow", headers=headers, timeout=10)
    assert follow.status_code == 200

    resp = requests.get(f"{BASE_URL}/api/articles/feed", headers=headers, timeout=10)
    assert resp.status_code == 200
    feed = resp.json()
    assert [a["slug"] for a in feed["articles"]] == [
        "welcome-to-conduit",
        "indexing-strategies",
        "sqlite-in-production",
        "how-to-train-your-dragon",
    ]
    assert feed["articlesCount"] == 4
    for article in feed["articles"]:
        assert article["author"]["username"] in ("alice", "bob")
        assert article["author"]["following"] is True

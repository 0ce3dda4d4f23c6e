import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def favorited_by(username):
    resp = requests.get(f"{BASE_URL}/api/articles", params={"favorited": username}, timeout=10)
    assert resp.status_code == 200
    return resp.json()


def test_filter_by_favorited():
    alice = favorited_by("alice")
    assert [a["slug"] for a in alice["articles"]] == ["sqlite-in-production", "dragons-of-the-north"]
    assert alice["articlesCount"] == 2

    dave = favorited_by("dave")
    assert dave["articles"] == []
    assert dave["articlesCount"] == 0

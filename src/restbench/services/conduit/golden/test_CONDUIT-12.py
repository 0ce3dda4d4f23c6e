import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_unfollow_a_user():
    body = {"user": {"email": "alice@conduit.test", "password": "alice-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    resp = requests.delete(f"{BASE_URL}/api/profiles/bob/follow", headers=headers, timeout=10)
    assert resp.status_code == 200
    assert resp.json()["profile"]["username"] == "bob"
    assert resp.json()["profile"]["following"] is False

    seen = requests.get(f"{BASE_URL}/api/profiles/bob", headers=headers, timeout=10)
    assert seen.json()["profile"]["following"] is False

    feed = requests.get(f"{BASE_URL}/api/articles/feed", headers=headers, timeout=10)
    assert feed.status_code == 200
    assert feed.json()["articles"] == []
    assert feed.json()["articlesCount"] == 0

    again = requests.delete(f"{BASE_URL}/api/profiles/bob/follow", headers=headers, timeout=10)
    assert again.status_code == 200
    assert again.json()["profile"]["following"] is False

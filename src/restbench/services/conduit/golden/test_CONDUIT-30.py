import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_feed_follows_the_follow_list():
    assert requests.get(f"{BASE_URL}/api/articles/feed", timeout=10).status_code == 401

    body = {"user": {"email": "dave@conduit.test", "password": "dave-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    def feed():
        resp = requests.get(f"{BASE_URL}/api/articles/feed", headers=headers, timeout=10)
        assert resp.status_code == 200
        return resp.json()

    empty = feed()
    assert empty["articles"] == []
    assert empty["articlesCount"] == 0

    requests.post(f"{BASE_URL}/api/profiles/carol/follow", headers=headers, timeout=10)
    following = feed()
    assert [a["slug"] for a in following["articles"]] == ["notes-on-data-modelling", "dragons-of-the-north"]
    assert following["articlesCount"] == 2

    requests.delete(f"{BASE_URL}/api/profiles/carol/follow", headers=headers, timeout=10)
    after = feed()
    assert after["articles"] == []
    assert after["articlesCount"] == 0

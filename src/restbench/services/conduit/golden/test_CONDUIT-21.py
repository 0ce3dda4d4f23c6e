import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_author_deletes_article():
    body = {"user": {"email": "bob@conduit.test", "password": "bob-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    resp = requests.delete(
        f"{BASE_URL}/api/articles/indexing-strategies",
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert resp.status_code == 204

    assert requests.get(f"{BASE_URL}/api/articles/indexing-strategies", timeout=10).status_code == 404
    everything = requests.get(f"{BASE_URL}/api/articles", timeout=10).json()
    assert everything["articlesCount"] == 5
    by_bob = requests.get(f"{BASE_URL}/api/articles", params={"author": "bob"}, timeout=10).json()
    assert [a["slug"] for a in by_bob["articles"]] == ["sqlite-in-production"]
    assert by_bob["articlesCount"] == 1

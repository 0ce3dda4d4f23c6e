import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
SEEDED = ["data", "databases", "dragons", "sqlite", "training", "welcome"]


def tags():
    resp = requests.get(f"{BASE_URL}/api/tags", timeout=10)
    assert resp.status_code == 200
    return resp.json()["tags"]


def test_tags_follow_the_articles():
    body = {"user": {"email": "carol@conduit.test", "password": "carol-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    article = {"title": "Zoo Notes", "description": "d", "body": "b", "tagList": ["zoology"]}
    created = requests.post(f"{BASE_URL}/api/articles", json={"article": article}, headers=headers, timeout=10)
    assert created.status_code == 201
    slug = created.json()["article"]["slug"]
    assert tags() == SEEDED + ["zoology"]

    deleted = requests.delete(f"{BASE_URL}/api/articles/{slug}", headers=headers, timeout=10)
    assert deleted.status_code == 204
    assert tags() == SEEDED

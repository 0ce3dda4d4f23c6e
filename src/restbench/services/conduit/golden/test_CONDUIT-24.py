import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def list_articles(**params):
    return requests.get(f"{BASE_URL}/api/articles", params=params, timeout=10)


def test_limit_and_offset():
    page = list_articles(limit=2, offset=1)
    assert page.status_code == 200
    assert [a["slug"] for a in page.json()["articles"]] == ["indexing-strategies", "sqlite-in-production"]
    assert page.json()["articlesCount"] == 6

    last = list_articles(offset=5)
    assert last.status_code == 200
    assert [a["slug"] for a in last.json()["articles"]] == ["how-to-train-your-dragon"]
    assert last.json()["articlesCount"] == 6

    invalid = list_articles(limit=0)
    assert invalid.status_code == 422
    assert "limit" in invalid.json()["errors"]

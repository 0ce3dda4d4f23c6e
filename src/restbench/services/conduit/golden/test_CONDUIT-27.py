import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def list_articles(**params):
    resp = requests.get(f"{BASE_URL}/api/articles", params=params, timeout=10)
    assert resp.status_code == 200
    return resp.json()


def test_filter_by_author():
    bob = list_articles(author="bob")
    assert [a["slug"] for a in bob["articles"]] == ["indexing-strategies", "sqlite-in-production"]
    assert bob["articlesCount"] == 2
    assert all(a["author"]["username"] == "bob" for a in bob["articles"])

    nobody = list_articles(author="nobody")
    assert nobody["articles"] == []
    assert nobody["articlesCount"] == 0

    carol = list_articles(author="carol", limit=1)
    assert [a["slug"] for a in carol["articles"]] == ["notes-on-data-modelling"]
    assert carol["articlesCount"] == 2

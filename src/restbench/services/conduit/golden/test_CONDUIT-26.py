import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def by_tag(tag):
    resp = requests.get(f"{BASE_URL}/api/articles", params={"tag": tag}, timeout=10)
    assert resp.status_code == 200
    return resp.json()


def test_filter_by_tag():
    dragons = by_tag("dragons")
    assert [a["slug"] for a in dragons["articles"]] == ["dragons-of-the-north", "how-to-train-your-dragon"]
    assert dragons["articlesCount"] == 2
    assert all("dragons" in a["tagList"] for a in dragons["articles"])

    data = by_tag("data")
    assert [a["slug"] for a in data["articles"]] == ["notes-on-data-modelling"]
    assert data["articlesCount"] == 1

    unknown = by_tag("unknown")
    assert unknown["articles"] == []
    assert unknown["articlesCount"] == 0

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_list_all_articles_newest_first():
    resp = requests.get(f"{BASE_URL}/api/articles", timeout=10)
    assert resp.status_code == 200
    data = resp.json()
    assert data["articlesCount"] == 6
    assert [a["slug"] for a in data["articles"]] == [
        "welcome-to-conduit",
        "indexing-strategies",
        "sqlite-in-production",
        "notes-on-data-modelling",
        "dragons-of-the-north",
        "how-to-train-your-dragon",
    ]
    authors = {a["slug"]: a["author"]["username"] for a in data["articles"]}
    assert authors["welcome-to-conduit"] == "alice"
    assert authors["sqlite-in-production"] == "bob"
    assert authors["dragons-of-the-north"] == "carol"
    counts = {a["slug"]: a["favoritesCount"] for a in data["articles"]}
    assert counts["sqlite-in-production"] == 2
    assert counts["how-to-train-your-dragon"] == 1
    assert counts["welcome-to-conduit"] == 0

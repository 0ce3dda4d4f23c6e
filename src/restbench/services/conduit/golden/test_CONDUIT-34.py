import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def comments_of(slug):
    return requests.get(f"{BASE_URL}/api/articles/{slug}/comments", timeout=10)


def test_list_comments_oldest_first():
    resp = comments_of("how-to-train-your-dragon")
    assert resp.status_code == 200
    comments = resp.json()["comments"]
    assert [c["id"] for c in comments] == [1, 2, 4]
    assert [c["body"] for c in comments] == [
        "Great read, thanks!",
        "My dragon still bites.",
        "Thanks, glad it helped.",
    ]
    assert [c["author"]["username"] for c in comments] == ["bob", "carol", "alice"]
    assert comments[0]["createdAt"] == "2024-01-11T10:00:00.000Z"

    other = comments_of("sqlite-in-production")
    assert [c["id"] for c in other.json()["comments"]] == [3]

    assert comments_of("no-such-article").status_code == 404

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_feed_paging():
    body = {"user": {"email": "bob@conduit.test", "password": "bob-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    full = requests.get(f"{BASE_URL}/api/articles/feed", headers=headers, timeout=10).json()
    assert [a["slug"] for a in full["articles"]] == [
        "welcome-to-conduit",
        "notes-on-data-modelling",
        "dragons-of-the-north",
        "how-to-train-your-dragon",
    ]
    assert full["articlesCount"] == 4

    page = requests.get(
        f"{BASE_URL}/api/articles/feed", params={"limit": 2, "offset": 1}, headers=headers, timeout=10
    )
    assert page.status_code == 200
    assert [a["slug"] for a in page.json()["articles"]] == ["notes-on-data-modelling", "dragons-of-the-north"]
    assert page.json()["articlesCount"] == 4

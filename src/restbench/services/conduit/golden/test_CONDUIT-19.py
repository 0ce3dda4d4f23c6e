import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_author_updates_article():
    body = {"user": {"email": "alice@conduit.test", "password": "alice-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    changes = {"title": "Training Dragons Safely", "description": "Updated guide", "body": "Start small."}
    resp = requests.put(
        f"{BASE_URL}/api/articles/how-to-train-your-dragon",
        json={"article": changes},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert resp.status_code == 200
    article = resp.json()["article"]
    assert article["slug"] == "training-dragons-safely"
    assert article["title"] == "Training Dragons Safely"
    assert article["description"] == "Updated guide"
    assert article["body"] == "Start small."
    assert article["tagList"] == ["dragons", "training"]
    assert article["createdAt"] == "2024-01-10T09:00:00.000Z"
    assert article["updatedAt"] > "2024-01-10T09:00:00.000Z"

    fetched = requests.get(f"{BASE_URL}/api/articles/training-dragons-safely", timeout=10)
    assert fetched.status_code == 200
    assert fetched.json()["article"]["body"] == "Start small."
    assert fetched.json()["article"]["description"] == "Updated guide"
    old = requests.get(f"{BASE_URL}/api/articles/how-to-train-your-dragon", timeout=10)
    assert old.status_code == 404

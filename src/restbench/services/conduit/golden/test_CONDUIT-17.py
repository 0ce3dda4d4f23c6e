import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_slugs_stay_unique():
    body = {"user": {"email": "carol@conduit.test", "password": "carol-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}
    article = {"title": "How to Train Your Dragon", "description": "Again", "body": "Mine."}

    first = requests.post(f"{BASE_URL}/api/articles", json={"article": article}, headers=headers, timeout=10)
    assert first.status_code == 201
    assert first.json()["article"]["slug"] == "how-to-train-your-dragon-2"

    second = requests.post(f"{BASE_URL}/api/articles", json={"article": article}, headers=headers, timeout=10)
    assert second.status_code == 201
    assert second.json()["article"]["slug"] == "how-to-train-your-dragon-3"

    original = requests.get(f"{BASE_URL}/api/articles/how-to-train-your-dragon", timeout=10)
    assert original.json()["article"]["author"]["username"] == "alice"
    copy = requests.get(f"{BASE_URL}/api/articles/how-to-train-your-dragon-2", timeout=10)
    assert copy.status_code == 200
    assert copy.json()["article"]["author"]["username"] == "carol"

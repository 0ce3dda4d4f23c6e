import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_default_page_size_is_twenty():
    body = {"user": {"email": "dave@conduit.test", "password": "dave-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}
    for n in range(1, 16):
        article = {"title": f"Filler {n}", "description": "filler", "body": "filler"}
        resp = requests.post(f"{BASE_URL}/api/articles", json={"article": article}, headers=headers, timeout=10)
        assert resp.status_code == 201

    first = requests.get(f"{BASE_URL}/api/articles", timeout=10).json()
    assert len(first["articles"]) == 20
    assert first["articlesCount"] == 21
    assert first["articles"][0]["slug"] == "filler-15"

    rest = requests.get(f"{BASE_URL}/api/articles", params={"offset": 20}, timeout=10).json()
    assert [a["slug"] for a in rest["articles"]] == ["how-to-train-your-dragon"]

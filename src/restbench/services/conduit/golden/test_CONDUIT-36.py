import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
COMMENTS = f"{BASE_URL}/api/articles/how-to-train-your-dragon/comments"


def test_author_deletes_own_comment():
    body = {"user": {"email": "carol@conduit.test", "password": "carol-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]

    resp = requests.delete(f"{COMMENTS}/2", headers={"Authorization": f"Token {token}"}, timeout=10)
    assert resp.status_code == 204

    remaining = requests.get(COMMENTS, timeout=10).json()["comments"]
    assert [c["id"] for c in remaining] == [1, 4]

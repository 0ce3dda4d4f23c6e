import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_comment_deletion_rights():
    body = {"user": {"email": "alice@conduit.test", "password": "alice-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}
    dragon = f"{BASE_URL}/api/articles/how-to-train-your-dragon/comments"
    sqlite = f"{BASE_URL}/api/articles/sqlite-in-production/comments"

    assert requests.delete(f"{dragon}/1", headers=headers, timeout=10).status_code == 403
    assert requests.delete(f"{sqlite}/4", headers=headers, timeout=10).status_code == 404
    assert requests.delete(f"{dragon}/4", timeout=10).status_code == 401
    assert requests.delete(f"{dragon}/99", headers=headers, timeout=10).status_code == 404

    remaining = requests.get(dragon, timeout=10).json()["comments"]
    assert [c["id"] for c in remaining] == [1, 2, 4]

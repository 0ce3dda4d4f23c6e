import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
COMMENTS = f"{BASE_URL}/api/articles/welcome-to-conduit/comments"


def test_add_comment():
    body = {"user": {"email": "dave@conduit.test", "password": "dave-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    resp = requests.post(COMMENTS, json={"comment": {"body": "Hello from Dave"}}, headers=headers, timeout=10)
    assert resp.status_code == 200
    comment = resp.json()["comment"]
    assert isinstance(comment["id"], int)
    assert comment["body"] == "Hello from Dave"
    assert comment["author"]["username"] == "dave"

    listed = requests.get(COMMENTS, timeout=10).json()["comments"]
    assert [(c["id"], c["body"], c["author"]["username"]) for c in listed] == [
        (comment["id"], "Hello from Dave", "dave")
    ]

    blank = requests.post(COMMENTS, json={"comment": {"body": "   "}}, headers=headers, timeout=10)
    assert blank.status_code == 422
    assert "body" in blank.json()["errors"]

    anonymous = requests.post(COMMENTS, json={"comment": {"body": "Anonymous"}}, timeout=10)
    assert anonymous.status_code == 401

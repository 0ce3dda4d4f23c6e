import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
URL = f"{BASE_URL}/api/articles/sqlite-in-production"


def test_only_the_author_may_delete():
    body = {"user": {"email": "carol@conduit.test", "password": "carol-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]

    as_carol = requests.delete(URL, headers={"Authorization": f"Token {token}"}, timeout=10)
    assert as_carol.status_code == 403
    anonymous = requests.delete(URL, timeout=10)
    assert anonymous.status_code == 401

    fetched = requests.get(URL, timeout=10)
    assert fetched.status_code == 200
    assert fetched.json()["article"]["author"]["username"] == "bob"
    assert fetched.json()["article"]["tagList"] == ["databases", "sqlite"]

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
URL = f"{BASE_URL}/api/articles/how-to-train-your-dragon"


def test_only_the_author_may_update():
    body = {"user": {"email": "bob@conduit.test", "password": "bob-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    change = {"article": {"title": "Hijacked"}}

    as_bob = requests.put(URL, json=change, headers={"Authorization": f"Token {token}"}, timeout=10)
    assert as_bob.status_code == 403
    anonymous = requests.put(URL, json=change, timeout=10)
    assert anonymous.status_code == 401

    fetched = requests.get(URL, timeout=10)
    assert fetched.status_code == 200
    assert fetched.json()["article"]["title"] == "How to Train Your Dragon"
    assert fetched.json()["article"]["slug"] == "how-to-train-your-dragon"

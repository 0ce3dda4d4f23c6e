import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_follow_a_user():
    body = {"user": {"email": "dave@conduit.test", "password": "dave-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    resp = requests.post(f"{BASE_URL}/api/profiles/carol/follow", headers=headers, timeout=10)
    assert resp.status_code == 200
    assert resp.json()["profile"]["username"] == "carol"
    assert resp.json()["profile"]["following"] is True

    seen = requests.get(f"{BASE_URL}/api/profiles/carol", headers=headers, timeout=10)
    assert seen.json()["profile"]["following"] is True
    anonymous = requests.get(f"{BASE_URL}/api/profiles/carol", timeout=10)
    assert anonymous.json()["profile"]["following"] is False

    again = requests.post(f"{BASE_URL}/api/profiles/carol/follow", headers=headers, timeout=10)
    assert again.status_code == 200
    assert again.json()["profile"]["following"] is True

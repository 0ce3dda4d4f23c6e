import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_follow_rules():
    body = {"user": {"email": "bob@conduit.test", "password": "bob-password"}}
    token = requests.post(f"{BASE_URL}/api/users/login", json=body, timeout=10).json()["user"]["token"]
    headers = {"Authorization": f"Token {token}"}

    myself = requests.post(f"{BASE_URL}/api/profiles/bob/follow", headers=headers, timeout=10)
    assert myself.status_code == 422
    assert "profile" in myself.json()["errors"]

    unknown = requests.post(f"{BASE_URL}/api/profiles/nobody/follow", headers=headers, timeout=10)
    assert unknown.status_code == 404

    anonymous = requests.post(f"{BASE_URL}/api/profiles/dave/follow", timeout=10)
    assert anonymous.status_code == 401

    dave = requests.get(f"{BASE_URL}/api/profiles/dave", headers=headers, timeout=10)
    assert dave.json()["profile"]["following"] is False

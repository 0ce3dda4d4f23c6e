import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_update_bio_and_image():
    resp = requests.post(
        f"{BASE_URL}/api/users/login",
        json={"user": {"email": "carol@conduit.test", "password": "carol-password"}},
        timeout=10,
    )
    headers = {"Authorization": f"Token {resp.json()['user']['token']}"}
    changes = {"bio": "I write field guides.", "image": "https://images.conduit.test/carol.png"}

    resp = requests.put(f"{BASE_URL}/api/user", json={"user": changes}, headers=headers, timeout=10)
    assert resp.status_code == 200
    user = resp.json()["user"]
    assert user["bio"] == "I write field guides."
    assert user["image"] == "https://images.conduit.test/carol.png"
    assert user["username"] == "carol"
    assert user["email"] == "carol@conduit.test"

    me = requests.get(f"{BASE_URL}/api/user", headers=headers, timeout=10).json()["user"]
    assert me["bio"] == "I write field guides."
    assert me["image"] == "https://images.conduit.test/carol.png"
    assert me["username"] == "carol"
    assert me["email"] == "carol@conduit.test"

    profile = requests.get(f"{BASE_URL}/api/profiles/carol", timeout=10).json()["profile"]
    assert profile["bio"] == "I write field guides."
    assert profile["image"] == "https://images.conduit.test/carol.png"

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_change_username():
    resp = requests.post(
        f"{BASE_URL}/api/users/login",
        json={"user": {"email": "dave@conduit.test", "password": "dave-password"}},
        timeout=10,
    )
    headers = {"Authorization": f"Token {resp.json()['user']['token']}"}

    def update(fields):
        return requests.put(f"{BASE_URL}/api/user", json={"user": fields}, headers=headers, timeout=10)

    resp = update({"username": "david"})
    assert resp.status_code == 200
    assert resp.json()["user"]["username"] == "david"

    assert requests.get(f"{BASE_URL}/api/profiles/david", timeout=10).status_code == 200
    assert requests.get(f"{BASE_URL}/api/profiles/dave", timeout=10).status_code == 404

    me = requests.get(f"{BASE_URL}/api/user", headers=headers, timeout=10)
    assert me.status_code == 200
    assert me.json()["user"]["username"] == "david"

    again = update({"username": "david", "bio": "Renamed."})
    assert again.status_code == 200
    assert again.json()["user"]["bio"] == "Renamed."

    taken = update({"username": "alice"})
    assert taken.status_code == 422
    assert "has already been taken" in taken.json()["errors"]["username"]

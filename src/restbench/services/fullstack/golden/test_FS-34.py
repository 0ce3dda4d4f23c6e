import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
API = BASE_URL + "/api/v1"
T = 10


def login(email, password):
    return requests.post(
        f"{API}/login/access-token", data={"username": email, "password": password}, timeout=T
    )


def auth(email, password):
    r = login(email, password)
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['access_token']}"}


UNKNOWN_ID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"


def my_id(headers):
    return requests.get(f"{API}/users/me", headers=headers, timeout=T).json()["id"]


def test_normal_user_reads_only_own_record_by_id():
    alice = auth("alice@example.com", "alicepass123")
    alice_id = my_id(alice)
    bob_id = my_id(auth("bob@example.com", "bobpass1234"))
    r = requests.get(f"{API}/users/{alice_id}", headers=alice, timeout=T)
    assert r.status_code == 200
    assert r.json()["email"] == "alice@example.com"
    for other in (bob_id, UNKNOWN_ID):
        r = requests.get(f"{API}/users/{other}", headers=alice, timeout=T)
        assert r.status_code == 403
        assert r.json() == {"detail": "The user doesn't have enough privileges"}

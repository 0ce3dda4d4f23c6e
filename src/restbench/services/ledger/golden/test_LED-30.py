"""LED-30: Transfer listing has a default page size of 10 and checks limit, cursor and owner."""

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
TIMEOUT = 10
PROBLEM = "https://ledger.example/problems/"
PASSWORDS = {"alice": "alice-pass-1", "bob": "bob-pass-2", "carol": "carol-pass-3"}


def login(username):
    r = requests.post(f"{BASE_URL}/v1/login",
                      json={"username": username, "password": PASSWORDS[username]}, timeout=TIMEOUT)
    assert r.status_code == 200
    return {"Authorization": f"Bearer {r.json()['token']}"}


def test_pagination_parameters():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_001/transfers"
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert len(r.json()["items"]) == 10
    assert r.json()["nextCursor"] is not None
    r = requests.get(url, params={"limit": 50}, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert len(r.json()["items"]) == 12
    for limit in ["0", "51", "abc"]:
        r = requests.get(url, params={"limit": limit}, headers=alice, timeout=TIMEOUT)
        assert r.status_code == 400, limit
        assert r.json()["errors"] == {"limit": "must be an integer from 1 to 50"}
    r = requests.get(url, params={"cursor": "not-a-cursor"}, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.json()["errors"] == {"cursor": "is not a cursor this service issued"}
    r = requests.get(url, headers=login("bob"), timeout=TIMEOUT)
    assert r.status_code == 404

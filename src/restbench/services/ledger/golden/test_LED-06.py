"""LED-06: Opening an account."""

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


def test_open_account():
    alice = login("alice")
    r = requests.post(f"{BASE_URL}/v1/accounts", json={"name": "  Holiday fund ", "currency": "USD"},
                      headers=alice, timeout=TIMEOUT)
    assert r.status_code == 201
    created = r.json()
    assert isinstance(created["id"], str)
    assert r.headers["Location"] == f"/v1/accounts/{created['id']}"
    assert r.headers.get("ETag")
    assert {k: v for k, v in created.items() if k != "id"} == {
        "owner": "alice", "name": "Holiday fund", "currency": "USD", "balance": 0, "status": "open"}
    r = requests.get(BASE_URL + r.headers["Location"], headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == created
    r = requests.get(f"{BASE_URL}/v1/accounts", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert len(r.json()["items"]) == 5
    assert r.json()["items"][-1] == created

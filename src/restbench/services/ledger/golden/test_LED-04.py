"""LED-04: A user lists exactly their own accounts, in id order, with balances and status."""

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


def test_list_own_accounts():
    r = requests.get(f"{BASE_URL}/v1/accounts", headers=login("alice"), timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {"items": [
        {"id": "acc_001", "owner": "alice", "name": "Alice main", "currency": "EUR",
         "balance": 100000, "status": "open"},
        {"id": "acc_002", "owner": "alice", "name": "Alice travel", "currency": "USD",
         "balance": 25000, "status": "open"},
        {"id": "acc_003", "owner": "alice", "name": "Alice savings", "currency": "EUR",
         "balance": 0, "status": "open"},
        {"id": "acc_004", "owner": "alice", "name": "Alice old", "currency": "EUR",
         "balance": 0, "status": "closed"},
    ]}
    r = requests.get(f"{BASE_URL}/v1/accounts", headers=login("bob"), timeout=TIMEOUT)
    assert r.status_code == 200
    assert [account["id"] for account in r.json()["items"]] == ["acc_101", "acc_102"]

"""LED-19: Cancelling a pending transfer refunds the payer, fee included."""

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


def test_cancel_refunds_the_payer():
    alice = login("alice")
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_101", "amount": 10000},
                      headers={**alice, "Idempotency-Key": "t-19"}, timeout=TIMEOUT)
    assert r.status_code == 201
    created = r.json()
    assert created["fee"] == 25
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 89975
    r = requests.post(f"{BASE_URL}/v1/transfers/{created['id']}/cancel", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {**created, "status": "cancelled"}
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 100000
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_101", headers=login("bob"), timeout=TIMEOUT)
    assert r.json()["balance"] == 50000

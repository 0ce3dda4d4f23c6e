"""LED-25: A transfer needing more than the balance (amount plus fee) is refused and changes nothing."""

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


def test_insufficient_funds():
    alice = login("alice")
    body = {"fromAccount": "acc_002", "toAccount": "acc_101", "amount": 25000}
    r = requests.post(f"{BASE_URL}/v1/transfers", json=body, headers={**alice, "Idempotency-Key": "nsf-1"},
                      timeout=TIMEOUT)
    assert r.status_code == 409
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert r.json()["type"] == PROBLEM + "insufficient-funds"
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_002", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 25000
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_002/transfers", headers=alice, timeout=TIMEOUT)
    assert r.json()["items"] == []
    r = requests.post(f"{BASE_URL}/v1/transfers", json={**body, "amount": 24938},
                      headers={**alice, "Idempotency-Key": "nsf-2"}, timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json()["fee"] == 62
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_002", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 0

"""LED-17: A transfer between one's own accounts is created pending, debits the payer and costs no fee."""

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


def test_own_transfer_is_pending():
    alice = login("alice")
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_003", "amount": 2500,
                            "description": "To savings"},
                      headers={**alice, "Idempotency-Key": "t-17"}, timeout=TIMEOUT)
    assert r.status_code == 201
    created = r.json()
    assert r.headers["Location"] == f"/v1/transfers/{created['id']}"
    assert {k: v for k, v in created.items() if k != "id"} == {
        "fromAccount": "acc_001", "toAccount": "acc_003", "amount": 2500, "currency": "EUR", "fee": 0,
        "creditAmount": 2500, "creditCurrency": "EUR", "rate": "1.000000", "status": "pending",
        "description": "To savings"}
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 97500
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 0
    r = requests.get(f"{BASE_URL}/v1/transfers/{created['id']}", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == created

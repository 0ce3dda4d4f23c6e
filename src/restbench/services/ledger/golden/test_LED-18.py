"""LED-18: Confirming a pending transfer settles it and credits the payee."""

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


def test_confirm_credits_the_payee():
    alice = login("alice")
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_003", "amount": 2500},
                      headers={**alice, "Idempotency-Key": "t-18"}, timeout=TIMEOUT)
    assert r.status_code == 201
    created = r.json()
    r = requests.post(f"{BASE_URL}/v1/transfers/{created['id']}/confirm", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json() == {**created, "status": "settled"}
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 2500
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 97500
    r = requests.get(f"{BASE_URL}/v1/transfers/{created['id']}", headers=alice, timeout=TIMEOUT)
    assert r.json()["status"] == "settled"

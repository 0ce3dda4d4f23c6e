"""LED-21: A transfer to another owner costs 0.25% rounded half to even, debited on top."""

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


def test_fee_rounds_half_to_even():
    alice = login("alice")
    expected = {1000: 2, 1400: 4, 1234: 3, 399: 1, 200: 0}
    for amount, fee in expected.items():
        r = requests.post(f"{BASE_URL}/v1/transfers",
                          json={"fromAccount": "acc_001", "toAccount": "acc_101", "amount": amount},
                          headers={**alice, "Idempotency-Key": f"fee-{amount}"}, timeout=TIMEOUT)
        assert r.status_code == 201, amount
        assert r.json()["fee"] == fee, amount
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 100000 - sum(expected) - sum(expected.values())

"""LED-13: Deposit amounts must be whole minor units from 1 to 100000000."""

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


def test_deposit_amount_bounds():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003/deposits"
    for n, amount in enumerate([0, -5, 12.5, "100", 100000001]):
        r = requests.post(url, json={"amount": amount}, headers={**alice, "Idempotency-Key": f"bad-{n}"},
                          timeout=TIMEOUT)
        assert r.status_code == 400, amount
        assert r.json()["type"] == PROBLEM + "validation-failed"
        assert r.json()["errors"] == {"amount": "must be an integer from 1 to 100000000"}
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 0
    r = requests.post(url, json={"amount": 100000000}, headers={**alice, "Idempotency-Key": "max"},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 100000000

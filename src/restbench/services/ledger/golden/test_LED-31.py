"""LED-31: An invalid transfer request is refused and moves no money."""

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


def test_transfer_validation():
    alice = login("alice")
    cases = [
        ({"fromAccount": "acc_001", "toAccount": "acc_001", "amount": 100}, 400,
         {"toAccount": "must differ from fromAccount"}),
        ({"fromAccount": "acc_001", "toAccount": "acc_003", "amount": 0}, 400,
         {"amount": "must be an integer from 1 to 100000000"}),
        ({"fromAccount": "acc_001", "toAccount": "acc_003", "amount": 100, "description": "d" * 141}, 400,
         {"description": "must be a string of at most 140 characters"}),
        ({"fromAccount": "acc_001", "toAccount": "acc_999", "amount": 100}, 404, None),
        ({"fromAccount": "acc_101", "toAccount": "acc_003", "amount": 100}, 404, None),
    ]
    for n, (body, status, errors) in enumerate(cases):
        r = requests.post(f"{BASE_URL}/v1/transfers", json=body,
                          headers={**alice, "Idempotency-Key": f"bad-{n}"}, timeout=TIMEOUT)
        assert r.status_code == status, body
        if errors is None:
            assert r.json()["type"] == PROBLEM + "not-found"
        else:
            assert r.json()["errors"] == errors
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_003", "amount": 100},
                      headers=alice, timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.json()["type"] == PROBLEM + "idempotency-key-missing"
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 100000
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_101", headers=login("bob"), timeout=TIMEOUT)
    assert r.json()["balance"] == 50000

"""LED-26: A closed account takes part in no deposit, transfer or rename."""

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


def test_closed_account_refuses_changes():
    alice = login("alice")
    refused = [
        ("/v1/accounts/acc_004/deposits", {"amount": 100}),
        ("/v1/transfers", {"fromAccount": "acc_004", "toAccount": "acc_001", "amount": 1}),
        ("/v1/transfers", {"fromAccount": "acc_001", "toAccount": "acc_004", "amount": 100}),
    ]
    for n, (path, body) in enumerate(refused):
        r = requests.post(BASE_URL + path, json=body, headers={**alice, "Idempotency-Key": f"closed-{n}"},
                          timeout=TIMEOUT)
        assert r.status_code == 409, body
        assert r.headers["Content-Type"].startswith("application/problem+json")
        assert r.json()["type"] == PROBLEM + "account-closed"
    url = f"{BASE_URL}/v1/accounts/acc_004"
    etag = requests.get(url, headers=alice, timeout=TIMEOUT).headers["ETag"]
    r = requests.patch(url, json={"name": "Reopened"}, headers={**alice, "If-Match": etag}, timeout=TIMEOUT)
    assert r.status_code == 409
    assert r.json()["type"] == PROBLEM + "account-closed"
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.json()["name"] == "Alice old"
    assert r.json()["balance"] == 0
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 100000

"""LED-15: An idempotency key reused for a different request is refused with 422."""

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


def test_key_reuse_with_other_request_is_refused():
    alice = login("alice")
    r = requests.post(f"{BASE_URL}/v1/accounts/acc_003/deposits", json={"amount": 700},
                      headers={**alice, "Idempotency-Key": "k-15"}, timeout=TIMEOUT)
    assert r.status_code == 201
    for account_id, amount in [("acc_003", 701), ("acc_001", 700)]:
        r = requests.post(f"{BASE_URL}/v1/accounts/{account_id}/deposits", json={"amount": amount},
                          headers={**alice, "Idempotency-Key": "k-15"}, timeout=TIMEOUT)
        assert r.status_code == 422, (account_id, amount)
        assert r.headers["Content-Type"].startswith("application/problem+json")
        assert r.json()["type"] == PROBLEM + "idempotency-key-reused"
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 700
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 100000

"""LED-12: A deposit credits the account by exactly its amount."""

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


def test_deposit_credits_the_account():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003/deposits"
    r = requests.post(url, json={"amount": 12345}, headers={**alice, "Idempotency-Key": "dep-1"},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    first = r.json()
    assert first["id"].startswith("dep_")
    assert {k: v for k, v in first.items() if k != "id"} == {
        "account": "acc_003", "amount": 12345, "currency": "EUR", "balanceAfter": 12345}
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 12345
    r = requests.post(url, json={"amount": 55}, headers={**alice, "Idempotency-Key": "dep-2"},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json()["balanceAfter"] == 12400
    assert r.json()["id"] != first["id"]
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 12400

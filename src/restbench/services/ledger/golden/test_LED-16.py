"""LED-16: Idempotency keys belong to the user, across logins."""

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


def test_keys_are_per_user():
    first_login = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003/deposits"
    r = requests.post(url, json={"amount": 300}, headers={**first_login, "Idempotency-Key": "shared-key"},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    first = r.json()
    second_login = login("alice")
    r = requests.post(url, json={"amount": 300}, headers={**second_login, "Idempotency-Key": "shared-key"},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json() == first
    assert r.headers.get("Idempotent-Replayed") == "true"
    bob = login("bob")
    r = requests.post(f"{BASE_URL}/v1/accounts/acc_101/deposits", json={"amount": 300},
                      headers={**bob, "Idempotency-Key": "shared-key"}, timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json()["account"] == "acc_101"
    assert r.json()["balanceAfter"] == 50300
    assert "Idempotent-Replayed" not in r.headers
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=first_login, timeout=TIMEOUT)
    assert r.json()["balance"] == 300
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_101", headers=bob, timeout=TIMEOUT)
    assert r.json()["balance"] == 50300

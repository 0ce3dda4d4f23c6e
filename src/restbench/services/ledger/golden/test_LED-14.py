"""LED-14: A repeated deposit with the same idempotency key is answered from the first and credits once."""

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


def test_deposit_replay():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003/deposits"
    r = requests.post(url, json={"amount": 700}, headers={**alice, "Idempotency-Key": "k-14"}, timeout=TIMEOUT)
    assert r.status_code == 201
    first = r.json()
    assert "Idempotent-Replayed" not in r.headers
    r = requests.post(url, json={"amount": 700}, headers={**alice, "Idempotency-Key": "k-14"}, timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json() == first
    assert r.headers.get("Idempotent-Replayed") == "true"
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 700
    r = requests.post(url, json={"amount": 700}, headers={**alice, "Idempotency-Key": "k-14b"}, timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json()["id"] != first["id"]
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 1400

"""LED-32: A repeated transfer is answered with the first answer, whatever happened since."""

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


def test_transfer_replay():
    alice = login("alice")
    key = {**alice, "Idempotency-Key": "t-32"}
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_101", "amount": 1000},
                      headers=key, timeout=TIMEOUT)
    assert r.status_code == 201
    first, location = r.json(), r.headers["Location"]
    assert first["status"] == "pending"
    r = requests.post(f"{BASE_URL}{location}/confirm", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"amount": 1000, "toAccount": "acc_101", "fromAccount": "acc_001"},
                      headers=key, timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.json() == first
    assert r.headers["Location"] == location
    assert r.headers.get("Idempotent-Replayed") == "true"
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 98998
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_101", headers=login("bob"), timeout=TIMEOUT)
    assert r.json()["balance"] == 51000

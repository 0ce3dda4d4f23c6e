"""LED-22: A transfer between currencies credits the converted amount, rounded half up."""

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


def test_conversion_rounds_half_up():
    alice = login("alice")
    cases = [
        ({"fromAccount": "acc_001", "toAccount": "acc_102", "amount": 250}, 1, 404, "JPY", "161.400000"),
        ({"fromAccount": "acc_002", "toAccount": "acc_001", "amount": 1000}, 0, 922, "EUR", "0.921700"),
        ({"fromAccount": "acc_001", "toAccount": "acc_002", "amount": 100}, 0, 109, "USD", "1.085000"),
    ]
    ids = []
    for n, (body, fee, credit, currency, rate) in enumerate(cases):
        r = requests.post(f"{BASE_URL}/v1/transfers", json=body,
                          headers={**alice, "Idempotency-Key": f"fx-{n}"}, timeout=TIMEOUT)
        assert r.status_code == 201, body
        assert r.json()["fee"] == fee, body
        assert r.json()["creditAmount"] == credit, body
        assert r.json()["creditCurrency"] == currency, body
        assert r.json()["rate"] == rate, body
        ids.append(r.json()["id"])
    r = requests.post(f"{BASE_URL}/v1/transfers/{ids[0]}/confirm", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_102", headers=login("bob"), timeout=TIMEOUT)
    assert r.json()["balance"] == 80404

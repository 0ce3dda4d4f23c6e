"""LED-20: Only a pending transfer can be confirmed or cancelled; refused steps change nothing."""

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


def transfer(headers, key):
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_003", "amount": 1000},
                      headers={**headers, "Idempotency-Key": key}, timeout=TIMEOUT)
    assert r.status_code == 201
    return f"{BASE_URL}/v1/transfers/{r.json()['id']}"


def test_refused_transitions():
    alice = login("alice")
    settled = transfer(alice, "t-20a")
    r = requests.post(f"{settled}/confirm", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    cancelled = transfer(alice, "t-20b")
    r = requests.post(f"{cancelled}/cancel", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    for url in [f"{settled}/confirm", f"{settled}/cancel", f"{cancelled}/confirm", f"{cancelled}/cancel",
                f"{BASE_URL}/v1/transfers/tr_0001/cancel"]:
        r = requests.post(url, headers=alice, timeout=TIMEOUT)
        assert r.status_code == 409, url
        assert r.headers["Content-Type"].startswith("application/problem+json")
        assert r.json()["type"] == PROBLEM + "invalid-transition"
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 99000
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 1000
    r = requests.get(settled, headers=alice, timeout=TIMEOUT)
    assert r.json()["status"] == "settled"
    r = requests.get(cancelled, headers=alice, timeout=TIMEOUT)
    assert r.json()["status"] == "cancelled"

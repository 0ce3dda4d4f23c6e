"""LED-28: Payer and payee see a transfer, others do not; only the payer confirms or cancels."""

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


def test_transfer_visibility_and_payer_only_actions():
    alice, bob, carol = login("alice"), login("bob"), login("carol")
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_101", "amount": 500},
                      headers={**alice, "Idempotency-Key": "t-28"}, timeout=TIMEOUT)
    assert r.status_code == 201
    url = f"{BASE_URL}/v1/transfers/{r.json()['id']}"
    r = requests.get(url, headers=bob, timeout=TIMEOUT)
    assert r.status_code == 200
    assert (r.json()["fromAccount"], r.json()["amount"], r.json()["status"]) == ("acc_001", 500, "pending")
    r = requests.get(url, headers=carol, timeout=TIMEOUT)
    assert r.status_code == 404
    assert r.json()["type"] == PROBLEM + "not-found"
    for action in ["confirm", "cancel"]:
        r = requests.post(f"{url}/{action}", headers=bob, timeout=TIMEOUT)
        assert r.status_code == 403, action
        assert r.json()["type"] == PROBLEM + "not-payer"
        r = requests.post(f"{url}/{action}", headers=carol, timeout=TIMEOUT)
        assert r.status_code == 404, action
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.json()["status"] == "pending"
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_101", headers=bob, timeout=TIMEOUT)
    assert r.json()["balance"] == 50000

"""LED-05: Another user's account answers exactly like an account that does not exist."""

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


def test_foreign_account_looks_missing():
    alice = login("alice")
    for account_id in ["acc_101", "acc_999"]:
        r = requests.get(f"{BASE_URL}/v1/accounts/{account_id}", headers=alice, timeout=TIMEOUT)
        assert r.status_code == 404, account_id
        assert r.headers["Content-Type"].startswith("application/problem+json")
        body = r.json()
        assert (body["type"], body["title"], body["status"], body["detail"]) == (
            PROBLEM + "not-found", "Resource not found", 404, f"Account {account_id} not found.")
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_101", headers=login("bob"), timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["balance"] == 50000

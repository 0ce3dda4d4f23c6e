"""LED-07: Opening an account validates the name and currency."""

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


def test_open_account_validation():
    alice = login("alice")
    cases = [
        ({"name": "Kids", "currency": "GBP"}, {"currency": "must be one of EUR, USD, JPY"}),
        ({"name": "   ", "currency": "EUR"}, {"name": "must be a string of 1 to 60 characters"}),
        ({"name": "x" * 61, "currency": "EUR"}, {"name": "must be a string of 1 to 60 characters"}),
    ]
    for body, errors in cases:
        r = requests.post(f"{BASE_URL}/v1/accounts", json=body, headers=alice, timeout=TIMEOUT)
        assert r.status_code == 400, body
        assert r.headers["Content-Type"].startswith("application/problem+json")
        assert r.json()["type"] == PROBLEM + "validation-failed"
        assert r.json()["errors"] == errors
    r = requests.post(f"{BASE_URL}/v1/accounts", data="{", headers={**alice, "Content-Type": "application/json"},
                      timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.json()["type"] == PROBLEM + "malformed-json"
    r = requests.post(f"{BASE_URL}/v1/accounts", json={"name": "y" * 60, "currency": "EUR"},
                      headers=alice, timeout=TIMEOUT)
    assert r.status_code == 201
    r = requests.get(f"{BASE_URL}/v1/accounts", headers=alice, timeout=TIMEOUT)
    assert [a["name"] for a in r.json()["items"]][4:] == ["y" * 60]

"""LED-23: An exchange quote converts with the fixed rate, rounded half up."""

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


def test_quotes():
    alice = login("alice")
    cases = [
        ({"from": "EUR", "to": "JPY", "amount": "250"},
         {"from": "EUR", "to": "JPY", "amount": 250, "converted": 404, "rate": "161.400000"}),
        ({"from": "JPY", "to": "EUR", "amount": "1000"},
         {"from": "JPY", "to": "EUR", "amount": 1000, "converted": 620, "rate": "0.006196"}),
        ({"from": "USD", "to": "USD", "amount": "999"},
         {"from": "USD", "to": "USD", "amount": 999, "converted": 999, "rate": "1.000000"}),
    ]
    for params, expected in cases:
        r = requests.get(f"{BASE_URL}/v1/fx/quote", params=params, headers=alice, timeout=TIMEOUT)
        assert r.status_code == 200, params
        assert r.json() == expected
    r = requests.get(f"{BASE_URL}/v1/fx/quote", params={"from": "EUR", "to": "GBP", "amount": "100"},
                     headers=alice, timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.json()["errors"] == {"to": "must be one of EUR, USD, JPY"}

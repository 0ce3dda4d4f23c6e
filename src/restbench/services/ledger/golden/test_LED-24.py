"""LED-24: Exchange quotes are limited to 5 per minute per user."""

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


def test_quote_rate_limit():
    alice = login("alice")
    params = {"from": "EUR", "to": "USD", "amount": "100"}
    with requests.Session() as session:
        for remaining in ["4", "3", "2", "1", "0"]:
            r = session.get(f"{BASE_URL}/v1/fx/quote", params=params, headers=alice, timeout=TIMEOUT)
            assert r.status_code == 200
            assert r.headers["RateLimit-Remaining"] == remaining
        r = session.get(f"{BASE_URL}/v1/fx/quote", params=params, headers=alice, timeout=TIMEOUT)
        assert r.status_code == 429
        assert r.headers["Content-Type"].startswith("application/problem+json")
        assert r.json()["type"] == PROBLEM + "rate-limited"
        assert 1 <= int(r.headers["Retry-After"]) <= 60
        r = session.get(f"{BASE_URL}/v1/fx/quote", params=params, headers=login("bob"), timeout=TIMEOUT)
        assert r.status_code == 200
        assert r.headers["RateLimit-Remaining"] == "4"

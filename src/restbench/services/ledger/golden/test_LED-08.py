"""LED-08: Accounts carry an ETag and honour If-None-Match."""

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


def test_etag_and_conditional_get():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_001"
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    etag = r.headers["ETag"]
    assert len(etag) > 2 and etag.startswith('"') and etag.endswith('"')
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.headers["ETag"] == etag
    r = requests.get(url, headers={**alice, "If-None-Match": etag}, timeout=TIMEOUT)
    assert r.status_code == 304
    assert r.content == b""
    r = requests.post(f"{url}/deposits", json={"amount": 100}, headers={**alice, "Idempotency-Key": "led08"},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    r = requests.get(url, headers={**alice, "If-None-Match": etag}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.headers["ETag"] != etag
    assert r.json()["balance"] == 100100

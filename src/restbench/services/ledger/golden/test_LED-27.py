"""LED-27: An account closes only when its balance is zero, and only once."""

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


def test_close_account():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003"
    etag = requests.get(url, headers=alice, timeout=TIMEOUT).headers["ETag"]
    r = requests.post(f"{url}/close", headers={**alice, "If-Match": etag}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["status"] == "closed"
    assert r.headers["ETag"] != etag
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.json()["status"] == "closed"
    r = requests.post(f"{url}/close", headers={**alice, "If-Match": r.headers["ETag"]}, timeout=TIMEOUT)
    assert r.status_code == 409
    assert r.json()["type"] == PROBLEM + "account-closed"

    main = f"{BASE_URL}/v1/accounts/acc_001"
    etag = requests.get(main, headers=alice, timeout=TIMEOUT).headers["ETag"]
    r = requests.post(f"{main}/close", headers={**alice, "If-Match": etag}, timeout=TIMEOUT)
    assert r.status_code == 409
    assert r.json()["type"] == PROBLEM + "balance-not-zero"
    r = requests.get(main, headers=alice, timeout=TIMEOUT)
    assert r.json()["status"] == "open"

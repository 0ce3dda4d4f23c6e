"""LED-09: Renaming an account with a current If-Match."""

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


def test_rename_with_if_match():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003"
    first = requests.get(url, headers=alice, timeout=TIMEOUT).headers["ETag"]
    r = requests.patch(url, json={"name": "Rainy day"}, headers={**alice, "If-Match": first}, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["name"] == "Rainy day"
    second = r.headers["ETag"]
    assert second != first
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.headers["ETag"] == second
    assert r.json()["name"] == "Rainy day"
    assert r.json()["balance"] == 0

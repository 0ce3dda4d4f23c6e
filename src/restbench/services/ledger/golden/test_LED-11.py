"""LED-11: A change without If-Match is refused with 428 and changes nothing."""

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


def test_missing_if_match_is_refused():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003"
    r = requests.patch(url, json={"name": "No tag"}, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 428
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert r.json()["type"] == PROBLEM + "precondition-required"
    r = requests.post(f"{url}/close", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 428
    assert r.json()["type"] == PROBLEM + "precondition-required"
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.json()["name"] == "Alice savings"
    assert r.json()["status"] == "open"

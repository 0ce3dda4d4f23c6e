"""LED-10: A change with a stale If-Match is refused with 412 and changes nothing."""

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


def test_stale_if_match_is_refused():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_003"
    first = requests.get(url, headers=alice, timeout=TIMEOUT).headers["ETag"]
    r = requests.patch(url, json={"name": "First"}, headers={**alice, "If-Match": first}, timeout=TIMEOUT)
    assert r.status_code == 200
    current = r.headers["ETag"]
    r = requests.patch(url, json={"name": "Second"}, headers={**alice, "If-Match": first}, timeout=TIMEOUT)
    assert r.status_code == 412
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert r.json()["type"] == PROBLEM + "precondition-failed"
    assert r.headers.get("ETag") == current
    r = requests.get(url, headers=alice, timeout=TIMEOUT)
    assert r.json()["name"] == "First"

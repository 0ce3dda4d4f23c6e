"""LED-29: An account's transfers page newest first with a stable cursor."""

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


def ids(response):
    return [item["id"] for item in response.json()["items"]]


def test_cursor_pagination():
    alice = login("alice")
    url = f"{BASE_URL}/v1/accounts/acc_001/transfers"
    r = requests.get(url, params={"limit": 5}, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert ids(r) == ["tr_0012", "tr_0011", "tr_0010", "tr_0009", "tr_0008"]
    first_cursor = r.json()["nextCursor"]
    assert isinstance(first_cursor, str) and first_cursor
    r = requests.post(f"{BASE_URL}/v1/transfers",
                      json={"fromAccount": "acc_001", "toAccount": "acc_003", "amount": 100},
                      headers={**alice, "Idempotency-Key": "t-29"}, timeout=TIMEOUT)
    assert r.status_code == 201
    r = requests.get(url, params={"limit": 5, "cursor": first_cursor}, headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200
    assert ids(r) == ["tr_0007", "tr_0006", "tr_0005", "tr_0004", "tr_0003"]
    r = requests.get(url, params={"limit": 5, "cursor": r.json()["nextCursor"]}, headers=alice, timeout=TIMEOUT)
    assert ids(r) == ["tr_0002", "tr_0001"]
    assert r.json()["nextCursor"] is None
    r = requests.get(url, params={"limit": 13}, headers=alice, timeout=TIMEOUT)
    assert len(ids(r)) == 13
    assert r.json()["nextCursor"] is None
    r = requests.get(f"{BASE_URL}/v1/accounts/acc_101/transfers", params={"limit": 3}, headers=login("bob"),
                     timeout=TIMEOUT)
    assert ids(r) == ["tr_0012", "tr_0011", "tr_0010"]

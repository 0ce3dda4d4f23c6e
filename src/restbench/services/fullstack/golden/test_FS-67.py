import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")
API = BASE_URL + "/api/v1"
T = 10


def login(email, password):
    return requests.post(
        f"{API}/login/access-token", data={"username": email, "password": password}, timeout=T
    )


def auth(email, password):
    r = login(email, password)
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['access_token']}"}


def test_outbox_is_superuser_only_and_filterable():
    admin = auth("admin@example.com", "changethis")
    r = requests.get(f"{API}/utils/sent-emails/", headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.json() == {"data": [], "count": 0}
    for email in ("alice@example.com", "bob@example.com"):
        assert requests.post(f"{API}/password-recovery/{email}", timeout=T).status_code == 200
    r = requests.get(f"{API}/utils/sent-emails/", headers=admin, timeout=T)
    assert [m["email_to"] for m in r.json()["data"]] == ["alice@example.com", "bob@example.com"]
    assert r.json()["count"] == 2
    r = requests.get(f"{API}/utils/sent-emails/", headers=admin, params={"email_to": "bob@example.com"}, timeout=T)
    assert [m["email_to"] for m in r.json()["data"]] == ["bob@example.com"]
    assert r.json()["count"] == 1
    alice = auth("alice@example.com", "alicepass123")
    r = requests.get(f"{API}/utils/sent-emails/", headers=alice, timeout=T)
    assert r.status_code == 403
    assert r.json() == {"detail": "The user doesn't have enough privileges"}

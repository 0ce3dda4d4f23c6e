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


def test_test_email_is_superuser_only_and_captured():
    admin = auth("admin@example.com", "changethis")
    r = requests.post(f"{API}/utils/test-email/", params={"email_to": "someone@example.com"}, headers=admin, timeout=T)
    assert r.status_code == 201
    assert r.json() == {"message": "Test email sent"}
    mails = requests.get(f"{API}/utils/sent-emails/", headers=admin, timeout=T).json()
    assert mails["count"] == 1
    assert mails["data"][0]["email_to"] == "someone@example.com"
    assert mails["data"][0]["subject"] == "Full Stack FastAPI Project - Test email"
    r = requests.post(f"{API}/utils/test-email/", params={"email_to": "bad"}, headers=admin, timeout=T)
    assert r.status_code == 422
    alice = auth("alice@example.com", "alicepass123")
    r = requests.post(f"{API}/utils/test-email/", params={"email_to": "someone@example.com"}, headers=alice, timeout=T)
    assert r.status_code == 403

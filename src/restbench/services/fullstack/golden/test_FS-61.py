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

import re


def test_reset_password_with_token_from_recovery_email():
    admin = auth("admin@example.com", "changethis")
    assert requests.post(f"{API}/password-recovery/alice@example.com", timeout=T).status_code == 200
    mails = requests.get(f"{API}/utils/sent-emails/", headers=admin, params={"email_to": "alice@example.com"}, timeout=T).json()
    token = re.search(r"reset-password\?token=([^\"&<\s]+)", mails["data"][-1]["html_content"]).group(1)
    r = requests.post(f"{API}/reset-password/", json={"token": token, "new_password": "alicereset99"}, timeout=T)
    assert r.status_code == 200
    assert r.json() == {"message": "Password updated successfully"}
    assert login("alice@example.com", "alicereset99").status_code == 200
    assert login("alice@example.com", "alicepass123").status_code == 400

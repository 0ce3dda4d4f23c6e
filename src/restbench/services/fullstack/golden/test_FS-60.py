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


def test_password_recovery_sends_a_captured_email_with_reset_link():
    admin = auth("admin@example.com", "changethis")
    assert requests.post(f"{API}/password-recovery/alice@example.com", timeout=T).status_code == 200
    assert requests.post(f"{API}/password-recovery/nobody@example.com", timeout=T).status_code == 200
    r = requests.get(f"{API}/utils/sent-emails/", headers=admin, timeout=T)
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 1
    mail = body["data"][0]
    assert mail["email_to"] == "alice@example.com"
    assert mail["subject"] == "Full Stack FastAPI Project - Password recovery for user alice@example.com"
    assert "reset-password?token=" in mail["html_content"]

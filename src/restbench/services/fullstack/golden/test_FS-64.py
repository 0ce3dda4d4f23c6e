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


def test_recovery_html_content_for_superusers():
    admin = auth("admin@example.com", "changethis")
    r = requests.post(f"{API}/password-recovery-html-content/alice@example.com", headers=admin, timeout=T)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["subject"] == "Full Stack FastAPI Project - Password recovery for user alice@example.com"
    assert "reset-password?token=" in r.text
    r = requests.post(f"{API}/password-recovery-html-content/nobody@example.com", headers=admin, timeout=T)
    assert r.status_code == 404
    assert r.json() == {"detail": "The user with this username does not exist in the system."}
    alice = auth("alice@example.com", "alicepass123")
    r = requests.post(f"{API}/password-recovery-html-content/alice@example.com", headers=alice, timeout=T)
    assert r.status_code == 403

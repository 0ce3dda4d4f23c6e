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


def test_new_account_email_on_admin_creation():
    admin = auth("admin@example.com", "changethis")
    body = {"email": "carl@example.com", "password": "carlpass123"}
    assert requests.post(f"{API}/users/", json=body, headers=admin, timeout=T).status_code == 200
    r = requests.get(f"{API}/utils/sent-emails/", headers=admin, params={"email_to": "carl@example.com"}, timeout=T)
    assert r.status_code == 200
    assert r.json()["count"] == 1
    mail = r.json()["data"][0]
    assert mail["email_to"] == "carl@example.com"
    assert mail["subject"] == "Full Stack FastAPI Project - New account for user carl@example.com"
    assert "carlpass123" in mail["html_content"]
    body = {"email": "signer@example.com", "password": "signerpass1"}
    assert requests.post(f"{API}/users/signup", json=body, timeout=T).status_code == 200
    r = requests.get(f"{API}/utils/sent-emails/", headers=admin, params={"email_to": "signer@example.com"}, timeout=T)
    assert r.json()["count"] == 0

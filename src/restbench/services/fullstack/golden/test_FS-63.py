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


def test_reset_password_refuses_inactive_account():
    admin = auth("admin@example.com", "changethis")
    assert requests.post(f"{API}/password-recovery/carol@example.com", timeout=T).status_code == 200
    mails = requests.get(f"{API}/utils/sent-emails/", headers=admin, params={"email_to": "carol@example.com"}, timeout=T).json()
    assert mails["count"] == 1
    token = re.search(r"reset-password\?token=([^\"&<\s]+)", mails["data"][0]["html_content"]).group(1)
    r = requests.post(f"{API}/reset-password/", json={"token": token, "new_password": "carolreset99"}, timeout=T)
    assert r.status_code == 400
    assert r.json() == {"detail": "Inactive user"}
    # The password is unchanged: the old one is still right (so the account is reported inactive),
    # the new one is wrong.
    r = login("carol@example.com", "carolpass12")
    assert (r.status_code, r.json()) == (400, {"detail": "Inactive user"})
    r = login("carol@example.com", "carolreset99")
    assert (r.status_code, r.json()) == (400, {"detail": "Incorrect email or password"})

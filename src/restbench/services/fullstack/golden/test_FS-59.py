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


MESSAGE = "If that email is registered, we sent a password recovery link"


def test_password_recovery_answers_the_same_for_any_address():
    for email in ("alice@example.com", "nobody@example.com"):
        r = requests.post(f"{API}/password-recovery/{email}", timeout=T)
        assert r.status_code == 200, email
        assert r.json() == {"message": MESSAGE}

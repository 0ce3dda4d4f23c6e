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

import base64
import hashlib
import hmac
import json
import time


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged_reset_token(email):
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    now = int(time.time())
    payload = b64(json.dumps({"sub": email, "nbf": now - 10, "exp": now + 3600}).encode())
    sig = hmac.new(b"not-the-service-key", f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(sig)}"


def test_reset_password_rejects_bad_tokens_and_short_passwords():
    access_token = login("alice@example.com", "alicepass123").json()["access_token"]
    for token in ("garbage", access_token, forged_reset_token("alice@example.com")):
        r = requests.post(f"{API}/reset-password/", json={"token": token, "new_password": "hijacked123"}, timeout=T)
        assert r.status_code == 400
        assert r.json() == {"detail": "Invalid token"}
    r = requests.post(f"{API}/reset-password/", json={"token": "garbage", "new_password": "short77"}, timeout=T)
    assert r.status_code == 422
    assert login("alice@example.com", "alicepass123").status_code == 200
    assert login("alice@example.com", "hijacked123").status_code == 400

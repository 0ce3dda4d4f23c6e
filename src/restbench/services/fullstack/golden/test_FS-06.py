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


def forged_token(sub):
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps({"sub": sub, "exp": int(time.time()) + 3600}).encode())
    signing_input = f"{header}.{payload}".encode()
    sig = hmac.new(b"not-the-service-key", signing_input, hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(sig)}"


def test_invalid_or_forged_tokens_are_rejected_with_403():
    me = requests.get(f"{API}/users/me", headers=auth("alice@example.com", "alicepass123"), timeout=T)
    alice_id = me.json()["id"]
    for token in ("garbage", forged_token(alice_id)):
        r = requests.get(f"{API}/users/me", headers={"Authorization": f"Bearer {token}"}, timeout=T)
        assert r.status_code == 403
        assert r.json() == {"detail": "Could not validate credentials"}

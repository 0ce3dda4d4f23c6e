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


def test_email_domain_is_lower_cased_local_part_kept():
    body = {"email": "Mixed.Case@Example.COM", "password": "mixedpass1"}
    r = requests.post(f"{API}/users/signup", json=body, timeout=T)
    assert r.status_code == 200
    assert r.json()["email"] == "Mixed.Case@example.com"
    r = login("Mixed.Case@example.com", "mixedpass1")
    assert r.status_code == 200
    headers = {"Authorization": f"Bearer {r.json()['access_token']}"}
    r = requests.patch(f"{API}/users/me", json={"email": "Other.Case@Example.ORG"}, headers=headers, timeout=T)
    assert r.status_code == 200
    assert r.json()["email"] == "Other.Case@example.org"

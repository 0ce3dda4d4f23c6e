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


def test_superuser_lists_all_items():
    admin = auth("admin@example.com", "changethis")
    r = requests.get(f"{API}/items/", headers=admin, timeout=T)
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 7
    assert [i["title"] for i in body["data"]] == [
        "Old notes",
        "Tax papers",
        "Bike repair",
        "Garden plan",
        "Book club notes",
        "Grocery list",
        "Admin checklist",
    ]

import os

import requests

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")


def test_list_tags():
    resp = requests.get(f"{BASE_URL}/api/tags", timeout=10)
    assert resp.status_code == 200
    assert resp.json() == {"tags": ["data", "databases", "dragons", "sqlite", "training", "welcome"]}

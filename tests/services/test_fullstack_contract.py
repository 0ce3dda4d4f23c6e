"""Contract of the built-in `fullstack` service over real HTTP.

`fullstack_url` (tests/conftest.py) is the base URL of a running original fullstack service,
reset to its seed state before each test. (That status-only twins of the golden tests leave a
surviving mutant on every requirement is checked for every service in test_status_only.py.)
"""

import requests

TIMEOUT = 10
SEED_ACCOUNTS = [
    ("admin@example.com", "changethis"),
    ("alice@example.com", "alicepass123"),
    ("bob@example.com", "bobpass1234"),
    ("dave@example.com", "davepass123"),
]
API_PATHS = {
    "/api/v1/login/access-token", "/api/v1/login/test-token",
    "/api/v1/password-recovery/{email}", "/api/v1/reset-password/",
    "/api/v1/password-recovery-html-content/{email}", "/api/v1/users/", "/api/v1/users/me",
    "/api/v1/users/me/password", "/api/v1/users/signup", "/api/v1/users/{user_id}",
    "/api/v1/utils/test-email/", "/api/v1/utils/sent-emails/", "/api/v1/utils/health-check/",
    "/api/v1/items/", "/api/v1/items/{id}",
}


def login(base: str, email: str, password: str) -> requests.Response:
    return requests.post(f"{base}/api/v1/login/access-token",
                         data={"username": email, "password": password}, timeout=TIMEOUT)


def bearer(base: str, email: str, password: str) -> dict:
    r = login(base, email, password)
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['access_token']}"}


def test_seed_accounts_log_in_and_tokens_identify_them(fullstack_url):
    for email, password in SEED_ACCOUNTS:
        r = login(fullstack_url, email, password)
        assert r.status_code == 200
        assert r.json()["token_type"] == "bearer"
        me = requests.post(f"{fullstack_url}/api/v1/login/test-token",
                           headers={"Authorization": f"Bearer {r.json()['access_token']}"},
                           timeout=TIMEOUT)
        assert me.status_code == 200
        assert me.json()["email"] == email
    r = login(fullstack_url, "carol@example.com", "carolpass12")
    assert (r.status_code, r.json()) == (400, {"detail": "Inactive user"})
    r = login(fullstack_url, "alice@example.com", "wrong-password")
    assert (r.status_code, r.json()) == (400, {"detail": "Incorrect email or password"})


def test_token_outcomes(fullstack_url):
    r = requests.get(f"{fullstack_url}/api/v1/users/me", timeout=TIMEOUT)
    assert (r.status_code, r.json()) == (401, {"detail": "Not authenticated"})
    assert r.headers["WWW-Authenticate"] == "Bearer"
    r = requests.get(f"{fullstack_url}/api/v1/users/me",
                     headers={"Authorization": "Bearer not-a-jwt"}, timeout=TIMEOUT)
    assert (r.status_code, r.json()) == (403, {"detail": "Could not validate credentials"})


def test_superuser_only_user_list(fullstack_url):
    alice = bearer(fullstack_url, "alice@example.com", "alicepass123")
    r = requests.get(f"{fullstack_url}/api/v1/users/", headers=alice, timeout=TIMEOUT)
    assert (r.status_code, r.json()) == (403, {"detail": "The user doesn't have enough privileges"})
    admin = bearer(fullstack_url, "admin@example.com", "changethis")
    r = requests.get(f"{fullstack_url}/api/v1/users/", headers=admin, timeout=TIMEOUT)
    assert r.status_code == 200
    assert r.json()["count"] == 5
    assert all("hashed_password" not in user for user in r.json()["data"])


def test_item_ownership(fullstack_url):
    alice = bearer(fullstack_url, "alice@example.com", "alicepass123")
    bob = bearer(fullstack_url, "bob@example.com", "bobpass1234")
    r = requests.post(f"{fullstack_url}/api/v1/items/", json={"title": "Mine"}, headers=alice,
                      timeout=TIMEOUT)
    assert r.status_code == 200
    item_url = f"{fullstack_url}/api/v1/items/{r.json()['id']}"
    for method in ("GET", "PUT", "DELETE"):
        r = requests.request(method, item_url, json={"title": "x"} if method == "PUT" else None,
                             headers=bob, timeout=TIMEOUT)
        assert (r.status_code, r.json()) == (403, {"detail": "Not enough permissions"}), method
    admin = bearer(fullstack_url, "admin@example.com", "changethis")
    assert requests.get(item_url, headers=admin, timeout=TIMEOUT).status_code == 200


def test_pagination_count_is_total(fullstack_url):
    admin = bearer(fullstack_url, "admin@example.com", "changethis")
    r = requests.get(f"{fullstack_url}/api/v1/items/", params={"skip": 2, "limit": 2},
                     headers=admin, timeout=TIMEOUT)
    assert r.status_code == 200
    assert [item["title"] for item in r.json()["data"]] == ["Bike repair", "Garden plan"]
    assert r.json()["count"] == 7
    r = requests.get(f"{fullstack_url}/api/v1/items/", params={"skip": -1}, headers=admin,
                     timeout=TIMEOUT)
    assert r.status_code == 422


def test_reset_restores_seed(fullstack_url):
    """Runs after other tests changed data: the fixture's reset must have restored it."""
    admin = bearer(fullstack_url, "admin@example.com", "changethis")
    items = requests.get(f"{fullstack_url}/api/v1/items/", headers=admin, timeout=TIMEOUT).json()
    assert items["count"] == 7
    mails = requests.get(f"{fullstack_url}/api/v1/utils/sent-emails/", headers=admin,
                         timeout=TIMEOUT).json()
    assert mails == {"data": [], "count": 0}


def test_openapi_documents_contract_and_seed(fullstack_url):
    doc = requests.get(f"{fullstack_url}/openapi.json", timeout=TIMEOUT).json()
    # Exactly the service's own operations: nothing the harness adds is documented.
    assert set(doc["paths"]) == API_PATHS
    description = doc["info"]["description"]
    for email, password in SEED_ACCOUNTS + [("carol@example.com", "carolpass12")]:
        assert email in description and password in description
    assert "sent-emails" in description
    flows = doc["components"]["securitySchemes"]["OAuth2PasswordBearer"]["flows"]
    assert flows["password"]["tokenUrl"] == "/api/v1/login/access-token"
    login_body = doc["paths"]["/api/v1/login/access-token"]["post"]["requestBody"]
    assert "application/x-www-form-urlencoded" in login_body["content"]
    item_ops = doc["paths"]["/api/v1/items/{id}"]
    for method in ("get", "put", "delete"):
        assert {"200", "400", "401", "403", "404", "422"} <= set(item_ops[method]["responses"])
    assert "409" in doc["paths"]["/api/v1/users/me"]["patch"]["responses"]
    assert "201" in doc["paths"]["/api/v1/utils/test-email/"]["post"]["responses"]

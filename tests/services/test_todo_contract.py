"""Contract of the built-in `todo` service over real HTTP.

`todo_url` (tests/conftest.py) is the base URL of a running original todo service, reset to
its seed state before each test.
"""

import requests

TIMEOUT = 10
SEED_ACCOUNTS = [
    ("admin@example.com", "Admin123!"),
    ("alice@example.com", "Alice123!"),
    ("bob@example.com", "Bob123!"),
]


def login(base: str, email: str, password: str) -> dict:
    r = requests.post(f"{base}/users/login", json={"email": email, "password": password},
                      timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def test_seed_accounts_log_in(todo_url):
    for email, password in SEED_ACCOUNTS:
        tokens = login(todo_url, email, password)
        assert tokens["tokenType"] == "Bearer"
        assert tokens["expiresIn"] == 3600
        info = requests.get(f"{todo_url}/users/manage/info",
                            headers=bearer(tokens["accessToken"]), timeout=TIMEOUT)
        assert info.json() == {"email": email, "isEmailConfirmed": False}


def test_auth_flow_register_login_refresh(todo_url):
    r = requests.post(f"{todo_url}/users/register",
                      json={"email": "dave@example.com", "password": "Dave123!"}, timeout=TIMEOUT)
    assert (r.status_code, r.content) == (200, b"")
    tokens = login(todo_url, "dave@example.com", "Dave123!")
    assert tokens["accessToken"].count(".") == 1  # opaque, not a three-part JWT

    r = requests.post(f"{todo_url}/users/refresh", json={"refreshToken": tokens["refreshToken"]},
                      timeout=TIMEOUT)
    assert r.status_code == 200
    r = requests.get(f"{todo_url}/todos", headers=bearer(r.json()["accessToken"]),
                     timeout=TIMEOUT)
    assert (r.status_code, r.json()) == (200, [])

    r = requests.get(f"{todo_url}/todos", timeout=TIMEOUT)
    assert (r.status_code, r.content) == (401, b"")
    assert r.headers["WWW-Authenticate"] == "Bearer"

    r = requests.post(f"{todo_url}/users/login",
                      json={"email": "dave@example.com", "password": "Wrong123!"}, timeout=TIMEOUT)
    assert r.status_code == 401
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert r.json() == {"type": "https://tools.ietf.org/html/rfc9110#section-15.5.2",
                        "title": "Unauthorized", "status": 401, "detail": "Failed"}


def test_seed_todos_and_ownership(todo_url):
    alice = bearer(login(todo_url, "alice@example.com", "Alice123!")["accessToken"])
    bob = bearer(login(todo_url, "bob@example.com", "Bob123!")["accessToken"])
    admin = bearer(login(todo_url, "admin@example.com", "Admin123!")["accessToken"])

    r = requests.get(f"{todo_url}/todos", headers=alice, timeout=TIMEOUT)
    assert r.json() == [{"id": 1, "title": "Buy milk", "isComplete": False},
                        {"id": 2, "title": "Pay the electricity bill", "isComplete": True}]
    r = requests.get(f"{todo_url}/todos/1", headers=bob, timeout=TIMEOUT)
    assert (r.status_code, r.content) == (404, b"")
    r = requests.delete(f"{todo_url}/todos/1", headers=bob, timeout=TIMEOUT)
    assert r.status_code == 404
    r = requests.get(f"{todo_url}/todos/1", headers=admin, timeout=TIMEOUT)
    assert r.status_code == 200
    assert requests.get(f"{todo_url}/todos", headers=admin, timeout=TIMEOUT).json() == []


def test_create_and_validation_problem(todo_url):
    alice = bearer(login(todo_url, "alice@example.com", "Alice123!")["accessToken"])
    r = requests.post(f"{todo_url}/todos", headers=alice,
                      json={"Title": "Plant tomatoes", "isComplete": True, "id": 50},
                      timeout=TIMEOUT)
    assert r.status_code == 201
    assert r.headers["Location"] == "/todos/4"
    assert r.json() == {"id": 4, "title": "Plant tomatoes", "isComplete": False}

    r = requests.post(f"{todo_url}/todos", headers=alice, json={"title": "  "}, timeout=TIMEOUT)
    assert r.status_code == 400
    assert r.headers["Content-Type"].startswith("application/problem+json")
    assert r.json() == {"type": "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                        "title": "One or more validation errors occurred.", "status": 400,
                        "errors": {"Title": ["The Title field is required."]}}

    r = requests.get(f"{todo_url}/todos/abc", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 400
    r = requests.put(f"{todo_url}/todos/1", headers=alice, json={"id": 2, "title": "x"},
                     timeout=TIMEOUT)
    assert (r.status_code, r.content) == (400, b"")


def test_reset_restores_seed(todo_url):
    """Runs after other tests changed data: the fixture's reset must have restored it."""
    alice = bearer(login(todo_url, "alice@example.com", "Alice123!")["accessToken"])
    r = requests.post(f"{todo_url}/todos", headers=alice, json={"title": "Fresh"},
                      timeout=TIMEOUT)
    assert r.json()["id"] == 4


def test_openapi_documents_contract_and_seed(todo_url):
    doc = requests.get(f"{todo_url}/openapi.json", timeout=TIMEOUT).json()
    paths = doc["paths"]
    assert set(paths) == {
        "/users/register", "/users/login", "/users/refresh", "/users/confirmEmail",
        "/users/resendConfirmationEmail", "/users/forgotPassword", "/users/resetPassword",
        "/users/manage/info", "/todos", "/todos/{id}",
    }
    description = doc["info"]["description"]
    for email, password in SEED_ACCOUNTS:
        assert email in description and password in description
    assert doc["components"]["securitySchemes"]["Bearer"]["scheme"] == "bearer"
    for method in ("get", "put", "delete"):
        responses = paths["/todos/{id}"][method]["responses"]
        assert {"401", "404", "429"} <= set(responses)
        assert "422" not in responses
    assert "application/problem+json" in paths["/todos"]["post"]["responses"]["400"]["content"]

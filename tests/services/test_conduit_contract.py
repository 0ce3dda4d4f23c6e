"""The conduit service's HTTP contract, exercised against a running original server."""

from __future__ import annotations

import requests

TIMEOUT = 10

OPERATIONS = {
    ("post", "/api/users"),
    ("post", "/api/users/login"),
    ("get", "/api/user"),
    ("put", "/api/user"),
    ("get", "/api/profiles/{username}"),
    ("post", "/api/profiles/{username}/follow"),
    ("delete", "/api/profiles/{username}/follow"),
    ("get", "/api/articles"),
    ("post", "/api/articles"),
    ("get", "/api/articles/feed"),
    ("get", "/api/articles/{slug}"),
    ("put", "/api/articles/{slug}"),
    ("delete", "/api/articles/{slug}"),
    ("post", "/api/articles/{slug}/favorite"),
    ("delete", "/api/articles/{slug}/favorite"),
    ("get", "/api/articles/{slug}/comments"),
    ("post", "/api/articles/{slug}/comments"),
    ("delete", "/api/articles/{slug}/comments/{id}"),
    ("get", "/api/tags"),
}

SEEDED = {
    "alice@conduit.test": "alice-password",
    "bob@conduit.test": "bob-password",
    "carol@conduit.test": "carol-password",
    "dave@conduit.test": "dave-password",
}


def _login(base: str, email: str) -> dict[str, str]:
    resp = requests.post(
        f"{base}/api/users/login",
        json={"user": {"email": email, "password": SEEDED[email]}},
        timeout=TIMEOUT,
    )
    assert resp.status_code == 200, resp.text
    return {"Authorization": f"Token {resp.json()['user']['token']}"}


def test_register_login_and_current_user(conduit_url: str) -> None:
    new = {"username": "zed", "email": "Zed@Conduit.test", "password": "zed-password"}
    created = requests.post(f"{conduit_url}/api/users", json={"user": new}, timeout=TIMEOUT)
    assert created.status_code == 201
    user = created.json()["user"]
    assert (user["username"], user["email"], user["bio"], user["image"]) == (
        "zed", "zed@conduit.test", "", ""
    )

    login = requests.post(
        f"{conduit_url}/api/users/login",
        json={"user": {"email": "zed@conduit.test", "password": "zed-password"}},
        timeout=TIMEOUT,
    )
    assert login.status_code == 200
    token = login.json()["user"]["token"]

    me = requests.get(
        f"{conduit_url}/api/user", headers={"Authorization": f"Token {token}"}, timeout=TIMEOUT
    )
    assert me.status_code == 200
    assert me.json()["user"]["username"] == "zed"
    assert me.json()["user"]["token"] == token

    assert requests.get(f"{conduit_url}/api/user", timeout=TIMEOUT).status_code == 401
    bad = requests.get(
        f"{conduit_url}/api/user", headers={"Authorization": "Token nope"}, timeout=TIMEOUT
    )
    assert bad.status_code == 401
    assert bad.json() == {"errors": {"token": ["is invalid"]}}
    wrong = requests.post(
        f"{conduit_url}/api/users/login",
        json={"user": {"email": "zed@conduit.test", "password": "wrong"}},
        timeout=TIMEOUT,
    )
    assert wrong.status_code == 401


def test_validation_errors_use_the_realworld_envelope(conduit_url: str) -> None:
    resp = requests.post(
        f"{conduit_url}/api/users",
        json={"user": {"username": "alice", "email": "bad", "password": ""}},
        timeout=TIMEOUT,
    )
    assert resp.status_code == 422
    assert resp.json() == {
        "errors": {
            "password": ["can't be blank"],
            "email": ["is invalid"],
            "username": ["has already been taken"],
        }
    }
    missing = requests.post(f"{conduit_url}/api/users", json={}, timeout=TIMEOUT)
    assert missing.status_code == 422
    assert "user" in missing.json()["errors"]


def test_only_authors_change_their_articles_and_comments(conduit_url: str) -> None:
    alice, bob = _login(conduit_url, "alice@conduit.test"), _login(conduit_url, "bob@conduit.test")
    url = f"{conduit_url}/api/articles/how-to-train-your-dragon"

    assert requests.put(url, json={"article": {"body": "x"}}, headers=bob, timeout=TIMEOUT).status_code == 403
    assert requests.delete(url, headers=bob, timeout=TIMEOUT).status_code == 403
    assert requests.delete(f"{url}/comments/1", headers=alice, timeout=TIMEOUT).status_code == 403

    updated = requests.put(url, json={"article": {"body": "New body"}}, headers=alice, timeout=TIMEOUT)
    assert updated.status_code == 200
    assert updated.json()["article"]["body"] == "New body"
    assert requests.delete(f"{url}/comments/1", headers=bob, timeout=TIMEOUT).status_code == 204
    assert requests.delete(url, headers=alice, timeout=TIMEOUT).status_code == 204
    assert requests.get(url, timeout=TIMEOUT).status_code == 404


def test_list_filters_count_before_paging(conduit_url: str) -> None:
    def slugs(**params: object) -> tuple[list[str], int]:
        resp = requests.get(f"{conduit_url}/api/articles", params=params, timeout=TIMEOUT)
        assert resp.status_code == 200
        body = resp.json()
        return [a["slug"] for a in body["articles"]], body["articlesCount"]

    assert slugs(tag="dragons") == (["dragons-of-the-north", "how-to-train-your-dragon"], 2)
    assert slugs(tag="dragons", limit=1, offset=1) == (["how-to-train-your-dragon"], 2)
    assert slugs(author="bob", tag="sqlite") == (["sqlite-in-production"], 1)
    assert slugs(favorited="bob") == (["dragons-of-the-north", "how-to-train-your-dragon"], 2)
    assert slugs(tag="nothing") == ([], 0)
    everything, total = slugs()
    assert total == 6 and len(everything) == 6


def test_feed_and_favorites(conduit_url: str) -> None:
    dave = _login(conduit_url, "dave@conduit.test")
    feed = requests.get(f"{conduit_url}/api/articles/feed", headers=dave, timeout=TIMEOUT).json()
    assert feed == {"articles": [], "articlesCount": 0}
    requests.post(f"{conduit_url}/api/profiles/bob/follow", headers=dave, timeout=TIMEOUT)
    feed = requests.get(f"{conduit_url}/api/articles/feed", headers=dave, timeout=TIMEOUT).json()
    assert [a["slug"] for a in feed["articles"]] == ["indexing-strategies", "sqlite-in-production"]

    fav = requests.post(
        f"{conduit_url}/api/articles/indexing-strategies/favorite", headers=dave, timeout=TIMEOUT
    )
    assert fav.status_code == 200
    assert (fav.json()["article"]["favorited"], fav.json()["article"]["favoritesCount"]) == (True, 1)


def test_openapi_document_is_complete_and_has_no_harness_routes(conduit_url: str) -> None:
    doc = requests.get(f"{conduit_url}/openapi.json", timeout=TIMEOUT).json()
    found = {(method, path) for path, ops in doc["paths"].items() for method in ops}
    assert found == OPERATIONS
    assert doc["components"]["securitySchemes"]["Token"] == {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": doc["components"]["securitySchemes"]["Token"]["description"],
    }
    assert "Token <jwt>" in doc["components"]["securitySchemes"]["Token"]["description"]
    for email, password in SEEDED.items():
        assert email in doc["info"]["description"]
        assert password in doc["info"]["description"]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            secured = any("Token" in requirement for requirement in op.get("security", []))
            if secured:
                assert "401" in op["responses"], (method, path)
    assert "403" in doc["paths"]["/api/articles/{slug}"]["put"]["responses"]
    assert "204" in doc["paths"]["/api/articles/{slug}"]["delete"]["responses"]
    assert "HTTPValidationError" not in str(doc)


def test_issuing_tokens_logs_no_key_length_warning(background_services: dict) -> None:
    """PyJWT warns on every token signed with an HS256 key shorter than 32 bytes."""
    service = background_services["get"]("conduit")
    base = service.reset()
    for email in SEEDED:
        _login(base, email)
    log = service.server.log_file.read_text(errors="replace")
    assert "InsecureKeyLengthWarning" not in log

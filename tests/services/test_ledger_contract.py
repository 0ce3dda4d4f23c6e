"""Contract of the built-in `ledger` service (Node.js, by manifest) over real HTTP.

`ledger_url` is the base URL of a running original ledger behind the harness's recording proxy,
reset to its seed state before each test. The last test checks the benchmark data itself: the
golden tests reduced to their status-code checks must leave a surviving mutant on every requirement.
"""

from __future__ import annotations

import json
import re
import shutil
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

import pytest
import requests

from restbench.benchmark.loader import builtin_services_root

TIMEOUT = 10
LEDGER = builtin_services_root() / "ledger"
PASSWORDS = {"alice": "alice-pass-1", "bob": "bob-pass-2", "carol": "carol-pass-3"}
EXPONENTS = {"EUR": 2, "USD": 2, "JPY": 0}
RATES = {("EUR", "USD"): "1.085", ("USD", "EUR"): "0.9217", ("EUR", "JPY"): "161.4",
         ("JPY", "EUR"): "0.006196", ("USD", "JPY"): "148.75", ("JPY", "USD"): "0.006723"}


@pytest.fixture(autouse=True)
def _node_installed() -> None:
    if shutil.which("node") is None:
        pytest.fail("Node.js is missing: apt-get install nodejs")


@pytest.fixture
def ledger_url(background_services: dict[str, Any]) -> str:
    return str(background_services["get"]("ledger").reset())


def bearer(base: str, username: str) -> dict[str, str]:
    r = requests.post(f"{base}/v1/login", json={"username": username, "password": PASSWORDS[username]},
                      timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def served_routes() -> set[tuple[str, str]]:
    """The route table of server/src/routes.js: (method, path template) per line."""
    source = (LEDGER / "server" / "src" / "routes.js").read_text(encoding="utf-8")
    return set(re.findall(r"\['(GET|POST|PUT|PATCH|DELETE)', '([^']+)', ", source))


def documented_routes() -> set[tuple[str, str]]:
    doc = json.loads((LEDGER / "openapi.json").read_text(encoding="utf-8"))
    return {(method.upper(), path) for path, item in doc["paths"].items()
            for method in item if method in {"get", "post", "put", "patch", "delete"}}


def test_every_served_route_is_documented_and_every_documented_route_is_served(ledger_url):
    assert served_routes() == documented_routes()
    assert len(served_routes()) == 14
    alice = bearer(ledger_url, "alice")
    for method, template in sorted(documented_routes()):
        path = template.replace("{id}", "tr_0001" if "transfers/" in template else "acc_001")
        r = requests.request(method, ledger_url + path, headers=alice, timeout=TIMEOUT)
        assert r.status_code not in (404, 405) or not r.json()["detail"].startswith("No route"), path
        assert r.status_code != 405, (method, path)
    r = requests.get(f"{ledger_url}/v1/nothing-here", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 404
    assert r.json()["detail"] == "No route for GET /v1/nothing-here."
    r = requests.delete(f"{ledger_url}/v1/accounts/acc_001", headers=alice, timeout=TIMEOUT)
    assert r.status_code == 405
    assert r.headers["Allow"] == "GET, PATCH"


def test_every_error_answer_of_the_document_is_a_problem_and_secured_operations_declare_401():
    doc = json.loads((LEDGER / "openapi.json").read_text(encoding="utf-8"))
    shared = doc["components"]["responses"]
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            for status, answer in operation["responses"].items():
                answer = shared[answer["$ref"].rsplit("/", 1)[1]] if "$ref" in answer else answer
                if status.startswith(("4", "5")):
                    assert list(answer["content"]) == ["application/problem+json"], (path, status)
            if "security" in operation:
                assert "401" in operation["responses"], (method, path)
    description = doc["info"]["description"]
    for username, password in PASSWORDS.items():
        assert f"`{username}` / `{password}`" in description


def test_seed_users_log_in_and_own_their_accounts(ledger_url):
    owned = {"alice": ["acc_001", "acc_002", "acc_003", "acc_004"], "bob": ["acc_101", "acc_102"],
             "carol": []}
    for username, accounts in owned.items():
        headers = bearer(ledger_url, username)
        r = requests.get(f"{ledger_url}/v1/me", headers=headers, timeout=TIMEOUT)
        assert r.json()["username"] == username
        r = requests.get(f"{ledger_url}/v1/accounts", headers=headers, timeout=TIMEOUT)
        assert [account["id"] for account in r.json()["items"]] == accounts


def test_quotes_match_exact_decimal_arithmetic_rounded_half_up(ledger_url):
    """Every rate pair, at amounts with and without ties, against Python's Decimal; 5 quotes per
    user fit the rate limit."""
    cases = [(pair, amount) for pair in RATES for amount in (1, 250)]
    cases += [(("EUR", "EUR"), 1234), (("USD", "USD"), 7), (("JPY", "JPY"), 99999)]
    users = [bearer(ledger_url, name) for name in PASSWORDS]
    for n, ((source, target), amount) in enumerate(cases):
        r = requests.get(f"{ledger_url}/v1/fx/quote",
                         params={"from": source, "to": target, "amount": amount},
                         headers=users[n // 5], timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        rate = Decimal(RATES.get((source, target), "1"))
        exact = Decimal(amount) * rate * Decimal(10) ** (EXPONENTS[target] - EXPONENTS[source])
        assert r.json()["converted"] == int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))
        assert Decimal(r.json()["rate"]) == rate


def test_seeded_fees_are_a_quarter_percent_rounded_half_to_even(ledger_url):
    alice = bearer(ledger_url, "alice")
    r = requests.get(f"{ledger_url}/v1/accounts/acc_001/transfers", params={"limit": 50},
                     headers=alice, timeout=TIMEOUT)
    fees = {item["amount"]: item["fee"] for item in r.json()["items"]}
    assert len(fees) == 12
    for amount, fee in fees.items():
        expected = (Decimal(amount) * Decimal("0.0025")).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
        assert fee == int(expected), amount


def test_reset_restores_balances_keys_and_rate_limits(background_services):
    service = background_services["get"]("ledger")
    base = service.reset()
    alice = bearer(base, "alice")
    deposit = {**alice, "Idempotency-Key": "reset-check"}
    r = requests.post(f"{base}/v1/accounts/acc_003/deposits", json={"amount": 5}, headers=deposit,
                      timeout=TIMEOUT)
    assert r.status_code == 201
    for _ in range(6):
        r = requests.get(f"{base}/v1/fx/quote", params={"from": "EUR", "to": "USD", "amount": 1},
                         headers=alice, timeout=TIMEOUT)
    assert r.status_code == 429
    base = service.reset()
    alice = bearer(base, "alice")
    r = requests.get(f"{base}/v1/accounts/acc_003", headers=alice, timeout=TIMEOUT)
    assert r.json()["balance"] == 0
    r = requests.post(f"{base}/v1/accounts/acc_003/deposits", json={"amount": 6},
                      headers={**alice, "Idempotency-Key": "reset-check"}, timeout=TIMEOUT)
    assert (r.status_code, r.json()["id"]) == (201, "dep_0001")
    assert "Idempotent-Replayed" not in r.headers
    r = requests.get(f"{base}/v1/fx/quote", params={"from": "EUR", "to": "USD", "amount": 1},
                     headers=alice, timeout=TIMEOUT)
    assert r.status_code == 200

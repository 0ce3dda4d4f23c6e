"""Warms Schemathesis and Hypothesis up in a test worker, once, before it forks the test process
of a Schemathesis test.

Importing Schemathesis costs 1.5 to 4.5 s on a busy 2-core machine; beyond that, every process
builds the same caches the first time it generates and checks requests: Hypothesis parses the
source of the filter lambdas it meets (to read bounds from them), looks at every loaded module
for constants, and Schemathesis builds its strategies and validators. A child forked after this
warm-up inherits all of it and pays only for what its own document adds (measured here: the
first Schemathesis run in a fresh child cost ~50-80 ms of CPU more than a second one).

The warm-up draws requests and checks the answers with the `schemathesis` baseline's checks on a
representative document, against a stub service on the loopback that answers some requests
right and some wrong (failure reports are built the first time too). The baseline's own tests
no longer draw (their requests are drawn when they are written, `generators.baselines.
schemathesis_cases`) and use only the checking half; tests that draw in the sandbox, as a
model's may, use both. What it leaves behind are caches keyed by code and arguments, never
drawn values: a test's requests are the same with or without it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from typing import Any

from restbench.execution.warm_up_stub import stub_service

EXAMPLES = 5  # per operation: the caches need the code paths, not many examples
_TEXT = {"type": "string", "minLength": 1, "maxLength": 50}
_ITEM_FIELDS = {
    "name": _TEXT,
    "email": {"type": "string", "format": "email"},
    "quantity": {"type": "integer", "minimum": 0, "maximum": 1000},
    "price": {"type": "number", "minimum": 0},
    "done": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "uniqueItems": True,
             "maxItems": 5},
    "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "kind": {"type": "string", "enum": ["book", "tool", "food"]},
    "due": {"type": "string", "format": "date-time"},
    "owner": {"type": "string", "format": "uuid"},
}
_JSON = "application/json"
DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "warm-up", "version": "1"},
    "paths": {
        "/login": {"post": {
            "requestBody": {"required": True, "content": {
                "application/x-www-form-urlencoded": {"schema": {
                    "type": "object", "required": ["username", "password"],
                    "properties": {"username": _TEXT, "password": _TEXT}}}}},
            "responses": {"200": {"description": "ok", "content": {_JSON: {"schema": {
                "$ref": "#/components/schemas/Token"}}}}}}},
        "/items": {"get": {
            "parameters": [
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1,
                                                            "maximum": 100}},
                {"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 20}},
                {"name": "done", "in": "query", "schema": {"type": "boolean"}}],
            "responses": {"200": {"description": "ok", "content": {_JSON: {"schema": {
                "type": "array", "items": {"$ref": "#/components/schemas/Item"}}}}}}}},
        "/items/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True,
                            "schema": {"type": "integer"}}],
            "put": {
                "security": [{"bearer": []}],
                "requestBody": {"required": True, "content": {_JSON: {"schema": {
                    "$ref": "#/components/schemas/ItemIn"}}}},
                "responses": {
                    "200": {"description": "ok", "content": {_JSON: {"schema": {
                        "$ref": "#/components/schemas/Item"}}}},
                    "401": {"description": "no token", "content": {_JSON: {"schema": {
                        "$ref": "#/components/schemas/Problem"}}}},
                    "422": {"description": "invalid", "content": {_JSON: {"schema": {
                        "$ref": "#/components/schemas/Problem"}}}}}},
            "delete": {  # the stub answers 500: the checks' failure reports warm up too
                "security": [{"bearer": []}],
                "responses": {"204": {"description": "deleted"}}},
        },
    },
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Token": {"type": "object", "required": ["access_token"], "properties": {
                "access_token": {"type": "string"}, "token_type": {"type": "string"}}},
            "ItemIn": {"type": "object", "required": ["name", "email"],
                       "properties": _ITEM_FIELDS, "additionalProperties": False},
            "Item": {"type": "object", "required": ["id", "name"],
                     "properties": {"id": {"type": "integer"}, **_ITEM_FIELDS}},
            "Problem": {"type": "object", "properties": {"detail": {"type": "string"}}},
        },
    },
}
OPERATIONS = (("POST", "/login", False), ("GET", "/items", False), ("PUT", "/items/{id}", True),
              ("DELETE", "/items/{id}", True))


def warm_up() -> None:
    """Never raises: where Schemathesis is missing or broken, each child imports it itself (the
    reason goes to the worker's log)."""
    here = os.getcwd()
    try:
        with tempfile.TemporaryDirectory() as folder:
            os.chdir(folder)  # where Hypothesis may leave a .hypothesis folder
            _generate_and_check()
    except Exception as exc:  # noqa: BLE001 - a warm-up; the tests report their own errors
        print(f"restbench worker: Schemathesis warm-up incomplete: {exc!r}", file=sys.stderr)
    finally:
        os.chdir(here)


def _generate_and_check() -> None:
    import pyrate_limiter  # noqa: F401 - what sending a generated request imports first
    import requests
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings

    # The checks of the `schemathesis` baseline.
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        ignored_auth,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_schema_conformance, ignored_auth]
    _skip_loaded_modules_for_hypothesis()
    schema = schemathesis.openapi.from_dict(DOCUMENT)
    with stub_service() as base_url, requests.Session() as session:
        for method, path, needs_auth in OPERATIONS:
            known = {"id": 1} if "{id}" in path else None
            strategy = schema[path][method].as_strategy(path_parameters=known)
            headers = {"Authorization": "Bearer warm"} if needs_auth else None

            @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                      phases=[Phase.explicit, Phase.generate],
                      suppress_health_check=list(HealthCheck), print_blob=False)
            @given(case=strategy)
            def check(case: Any) -> None:
                case.call_and_validate(base_url=base_url, session=session, checks=checks,
                                       headers=headers, timeout=10)  # noqa: B023 - run at once

            with contextlib.suppress(AssertionError, BaseExceptionGroup):
                check()
    _skip_loaded_modules_for_hypothesis()  # and those the draws imported


def _skip_loaded_modules_for_hypothesis() -> None:
    """Hypothesis draws some values from the constants of the user's own ("local") modules; to
    find them it looks at the path of every loaded module once per process (~1,400 modules,
    50-100 ms of CPU in each test process), then only at modules loaded since. Marked as looked
    at here, before anything is drawn, the worker's modules are neither scanned again in every
    child nor taken as local: restbench's own modules count as local where it is installed
    editable, and their constants would then change the requests drawn, which must depend on
    the test alone (installed from a wheel, they are never local). Internal to Hypothesis: where
    it is missing, each child scans for itself."""
    try:
        from hypothesis.internal.conjecture import providers

        loaded = list(sys.modules.values())
        providers._seen_modules.update(id(module) for module in loaded)
        providers._sys_modules_len = len(sys.modules)
    except (ImportError, AttributeError):
        pass

"""What validate says of a service's OpenAPI document: operations the requirements name that it
lacks (problems), answers of the golden tests that it does not declare (notes)."""

from __future__ import annotations

from pathlib import Path

from restbench.benchmark import load_service
from restbench.engine.validate_document import check_document
from restbench.generators.baselines.openapi import declares_status, operation_at
from tests.cli_helpers import restbench

MINI = Path(__file__).parents[1] / "fixtures" / "mini"

DOCUMENT = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {
    "/counters/{name}": {"get": {"responses": {"200": {"description": "ok"},
                                               "4XX": {"description": "refused"}}}},
    "/counters/{name}/increment": {"post": {"responses": {"200": {"description": "ok"}}}},
    "/users/me": {"get": {"responses": {"200": {"description": "me"}}}},
    "/users/{id}": {"get": {"responses": {"default": {"description": "any"}}}},
}}


def test_a_concrete_path_finds_its_operation_the_literal_one_first() -> None:
    assert operation_at(DOCUMENT, "GET", "/users/me").path == "/users/me"
    assert operation_at(DOCUMENT, "GET", "/users/7").path == "/users/{id}"
    assert operation_at(DOCUMENT, "GET", "/counters/a/").path == "/counters/{name}"
    assert operation_at(DOCUMENT, "POST", "/counters/a") is None  # no such method there
    assert operation_at(DOCUMENT, "GET", "/counters/a/b") is None
    counter = operation_at(DOCUMENT, "GET", "/counters/a")
    assert declares_status(counter, 200) and declares_status(counter, 404)  # 4XX
    assert not declares_status(counter, 500)
    assert declares_status(operation_at(DOCUMENT, "GET", "/users/7"), 503)  # default


def test_undeclared_answers_are_notes_each_once_with_the_requirements_that_met_them() -> None:
    service = load_service(MINI)
    exchanges = {
        "MINI-01": [{"method": "GET", "url": "/counters/a?x=1", "status": 500},
                    {"method": "GET", "url": "/counters/b", "status": 500},
                    {"method": "GET", "url": "/counters/b", "status": 404}],
        "MINI-02": [{"method": "POST", "url": "/counters/a/increment", "status": 201},
                    {"method": "GET", "url": "/counters/a", "status": 500},
                    {"method": "DELETE", "url": "/counters/a", "status": 405}],
    }
    found = check_document(service, DOCUMENT, exchanges)
    assert found.problems == [] and found.by_requirement == {}
    assert [note.split(" (golden tests of ")[0] for note in found.notes] == [
        "GET /counters/{name} answered 500, which the OpenAPI document does not declare for it",
        ("POST /counters/{name}/increment answered 201, which the OpenAPI document does not "
        "declare for it"),
        "DELETE /counters/a is no operation of the OpenAPI document"]
    assert "(golden tests of MINI-01, MINI-02 on the original; " in found.notes[0]


def test_a_document_that_lacks_an_operation_or_cannot_be_read() -> None:
    service = load_service(MINI)
    lacking = {**DOCUMENT, "paths": {"/counters/{name}/increment": DOCUMENT["paths"][
        "/counters/{name}/increment"]}}
    found = check_document(service, lacking, {})
    assert found.by_requirement == {"MINI-01": [
        (f"MINI-01: operation 'GET /counters/{{name}}' is not in the service's OpenAPI document "
        f"({MINI / 'requirements.yaml'})")]}
    assert check_document(service, "service mini: GET /openapi.json answered 404", {}).problems \
        == ["service mini: GET /openapi.json answered 404"]
    assert check_document(service, None, {}).problems == []  # the original did not start


def test_validate_prints_the_notes_and_still_calls_the_service_sound() -> None:
    """The mini service's document does not declare the 404 of an unknown counter."""
    done = restbench("validate", "-s", MINI)
    assert done.returncode == 0, done.stderr
    assert ("note: GET /counters/{name} answered 404, which the OpenAPI document does not "
            "declare for it (golden tests of MINI-01 on the original;") in done.stderr
    assert "all sound" in done.stdout

"""FastAPI's field adapters shared between identical fields (serving.shared_field_adapters): the
key tells apart every two fields that could behave differently, and an app built with sharing
answers exactly as one built without."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, ForwardRef, Literal, Optional

import annotated_types
import pydantic
import pytest

from restbench.benchmark import resolve_services
from restbench.serving.shared_field_adapters import _Unkeyable, field_key


def key(annotation: Any, metadata: list[Any] | None = None, **attributes: Any) -> Any:
    return field_key(annotation, metadata or [], attributes, None)


def test_equal_values_of_different_types_are_different_keys() -> None:
    keys = {key(int, default=0), key(int, default=False), key(int, default=0.0)}
    assert len(keys) == 3
    assert key(Literal[0]) != key(Literal[False])
    assert key(int, [annotated_types.Ge(0)]) != key(int, [annotated_types.Ge(0.0)])


def test_fields_built_alike_twice_have_one_key() -> None:
    """What a re-imported route module builds again: new objects, equal in every part."""
    assert key(list[int], [annotated_types.Ge(1)], default=5, description="count") == \
        key(list[int], [annotated_types.Ge(1)], default=5, description="count")
    assert key(Optional[int], alias="limit") == key(Optional[int], alias="limit")  # noqa: UP045
    assert key(int | None) != key(Optional[int])  # noqa: UP045 - two constructs: not assumed alike


def test_a_class_defined_again_or_rebuilt_is_a_different_key() -> None:
    def define() -> type[pydantic.BaseModel]:
        class Item(pydantic.BaseModel):
            name: str
        return Item

    first, again = define(), define()
    assert key(first) == key(first)
    assert key(first) != key(again)
    assert key(list[first]) != key(list[again])
    before = key(first)
    first.model_rebuild(force=True)
    assert key(first) != before


def test_mutable_values_and_functions_are_keyed_by_identity() -> None:
    examples = [1, 2]
    assert key(int, examples=examples) == key(int, examples=examples)
    assert key(int, examples=examples) != key(int, examples=[1, 2])
    assert key(int, default_factory=lambda: 1) != key(int, default_factory=lambda: 1)


@pytest.mark.parametrize("annotation", [
    "Item", types.GenericAlias(list, ("Item",)), Optional[ForwardRef("Item")]])  # noqa: UP045
def test_a_forward_reference_is_never_shared(annotation: Any) -> None:
    with pytest.raises(_Unkeyable):
        key(annotation)


def test_a_model_field_is_keyed_by_its_config_too() -> None:
    """FastAPI builds a model's fields with the model's config (for the OpenAPI document)."""
    assert field_key(int, [], {}, {"strict": True}) == field_key(int, [], {}, {"strict": True})
    assert field_key(int, [], {}, {"strict": True}) != field_key(int, [], {}, {"strict": 1})
    assert field_key(int, [], {}, {"strict": True}) != field_key(int, [], {}, None)


# Builds the service's app twice in one process (the second time, as a server that re-imports
# modules does, FastAPI builds every route's fields again), then prints the number of adapters
# built, the OpenAPI document, and what every route field makes of a few inputs.
APP_REPORT = r"""
import importlib, json, sys
import fastapi._compat.v2 as v2
from restbench.serving import shared_field_adapters

builds = 0
build = v2.ModelField.__post_init__
def counting(field):
    global builds
    builds += 1
    build(field)
v2.ModelField.__post_init__ = counting
if sys.argv[1] == "shared":
    shared_field_adapters.install()
sys.path.insert(0, sys.argv[2])
main = importlib.import_module("app.main")

def route_fields(app):
    pending = list(app.routes)
    while pending:
        route = pending.pop(0)
        included = getattr(getattr(route, "original_router", None), "routes", None)
        if included is not None:
            pending.extend(included)
            continue
        dependant = getattr(route, "dependant", None)
        if dependant is None:
            continue
        for group in ("path_params", "query_params", "header_params", "body_params"):
            yield from getattr(dependant, group)
        if route.response_field is not None:
            yield route.response_field

inputs = [None, 1, "x", "2024-01-01", [], {}, {"unexpected": 1}, {"email": "a@b.c"}]
report = []
for round in range(2):
    app = main.create_app(f"sqlite:///{sys.argv[3]}/{round}.sqlite3")
    document = app.openapi()
    for field in route_fields(app):
        for value in inputs:
            result, errors = field.validate(value)
            report.append([field.name, repr(result), json.loads(json.dumps(errors, default=str))])
print(json.dumps({"builds": builds, "openapi": document, "validations": report}))
"""


def _report(mode: str, root: Path, folder: Path) -> dict[str, Any]:
    folder.mkdir()
    done = subprocess.run([sys.executable, "-c", APP_REPORT, mode, str(root), str(folder)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("service", ["todo", "conduit", "fullstack"])
def test_an_app_built_with_shared_adapters_answers_as_one_built_without(
        service: str, tmp_path: Path) -> None:
    root = resolve_services([service])[0].root
    plain = _report("plain", root, tmp_path / "plain")
    shared = _report("shared", root, tmp_path / "shared")
    assert shared["openapi"] == plain["openapi"]
    assert shared["validations"] == plain["validations"]
    assert len(plain["validations"]) > 100
    # The second app's fields were all seen before: it builds none of its own.
    assert shared["builds"] <= plain["builds"] / 2, (shared["builds"], plain["builds"])


def test_a_field_whose_key_cannot_be_made_is_built_as_before(tmp_path: Path) -> None:
    """A constraint that raises when read (a frozen dataclass with a field never set)
    does not stop FastAPI from building the field: it gets an adapter of its own."""
    script = r"""
import dataclasses, json
import fastapi._compat.v2 as v2
from typing import Annotated
from fastapi import FastAPI, Query
from fastapi.testclient import TestClient
from restbench.serving import shared_field_adapters

shared_field_adapters.install()

@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Unread:
    never_set: int = dataclasses.field(init=False)

    def __get_pydantic_core_schema__(self, source, handler):
        return handler(source)

app = FastAPI()

@app.get("/items")
def items(limit: Annotated[int, Unread(), Query()] = 3) -> dict[str, int]:
    return {"limit": limit}

with TestClient(app) as client:
    print(json.dumps([client.get("/items?limit=5").json(), client.get("/items?limit=x").status_code]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [{"limit": 5}, 422]

"""Request planning shared by the oracles: which calls to make, with which inputs, in which order.

The plan performs the requirement's operations in the order the requirement lists them. Before
them comes a login when any call needs a token (the service's `auth` block). A path parameter
gets a real value where one can be had: from an earlier call of the plan that creates or lists
that resource, else from a call added for that purpose (POST on the collection, else GET on it),
else from the service's seed facts. The plan is plain data that the generated test embeds; the
test file runs it with the code in `runtime.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from restbench.benchmark.models import Login
from restbench.generators.base import GenerationTask
from restbench.generators.baselines.openapi import (
    Operation,
    as_json_schema,
    deref,
    find_operation,
    needed_schemas,
    operation_or_fail,
)
from restbench.generators.baselines.values import ValueMaker

PARAMETER = re.compile(r"\{([^}/]+)\}")
JSON_MEDIA = ("application/json", "+json")
FORM_MEDIA = ("application/x-www-form-urlencoded", "multipart/form-data")
SEARCH_DEPTH = 3


@dataclass(frozen=True)
class _Source:
    """Where a value comes from at run time: the answer of step `step`, at `at`."""

    step: int
    at: tuple[str | int, ...]

    def ref(self, default: Any) -> dict[str, Any]:
        return {"$from": self.step, "$at": list(self.at), "$default": default}


def _names_for(parameter: str) -> list[str]:
    """Response fields that may hold a path parameter's value: `user_id` is a user's `id`."""
    names = [parameter]
    for suffix in ("_id", "Id", "ID"):
        if parameter.endswith(suffix) and parameter != suffix:
            names.append("id")
    return names


class Planner:
    def __init__(self, task: GenerationTask) -> None:
        self.document = task.openapi
        self.login: Login | None = task.auth
        self.seed = task.seed
        self.values = ValueMaker(self.document, dict(self.seed.values))
        self.steps: list[dict[str, Any]] = []
        self.operations: list[Operation] = []
        self.sources: dict[tuple[str, str], _Source] = {}  # (collection, parameter) -> source
        self.login_step = False

    def plan(self, operations: list[str]) -> dict[str, Any]:
        chosen = [operation_or_fail(self.document, label) for label in operations]
        for operation in chosen:
            self._add(operation, setup=False)
        return {"base_url": "", "steps": self.steps,
                "auth": None if self.login is None else {"header": self.login.header,
                                                         "format": self.login.format}}

    # -- steps ---------------------------------------------------------------------------------

    def _ensure_login(self) -> None:
        if self.login_step or self.login is None:
            return
        self.login_step = True
        operation = operation_or_fail(self.document, self.login.operation)
        self.steps.append({"label": f"log in: {operation.label}", "method": operation.method,
                           "path": operation.path,
                           "form" if self.login.form else "json": self.login.body,
                           "token": self.login.token.split(".")})
        self.operations.append(operation)

    def _add(self, operation: Operation, setup: bool) -> int:
        auth = self.login is not None and operation.needs_auth(self.document)
        if auth:
            self._ensure_login()
        path_params = {name: self._path_value(operation, name)
                       for name in PARAMETER.findall(operation.path)}
        step: dict[str, Any] = {"label": ("set up: " if setup else "") + operation.label,
                                "method": operation.method, "path": operation.path}
        if path_params:
            step["path_params"] = path_params
        if auth:
            step["auth"] = True
        query = {p["name"]: self._parameter_value(p)
                 for p in operation.parameters(self.document, "query") if p.get("required")}
        if query:
            step["query"] = query
        if self.login is not None and operation.label == find_label(self.document,
                                                                   self.login.operation):
            step["form" if self.login.form else "json"] = self.login.body
            step["token"] = self.login.token.split(".")  # the plan's later calls use this login
            self.login_step = True
        else:
            step.update(self._body(operation, path_params))
        self.steps.append(step)
        self.operations.append(operation)
        index = len(self.steps) - 1
        self._remember_what_it_makes(operation, index)
        return index

    def _parameter_value(self, parameter: dict[str, Any]) -> Any:
        name = parameter["name"]
        if name in self.seed.values:
            return self.seed.values[name]
        if "example" in parameter:
            return parameter["example"]
        return self.values.value(parameter.get("schema", {}), name)

    def _body(self, operation: Operation, path_params: dict[str, Any]) -> dict[str, Any]:
        body = deref(self.document, operation.spec.get("requestBody") or {})
        content = body.get("content") or {}
        json_media = [m for m in content if m.endswith(JSON_MEDIA)]
        form_media = [m for m in content if m.startswith(FORM_MEDIA)]
        if not content or (not json_media and not form_media):
            return {}
        media = (json_media or form_media)[0]
        schema = as_json_schema(self.document, content[media].get("schema") or {})
        value = self.values.value(schema)
        if isinstance(value, dict):  # a body field named like a path parameter repeats it
            value.update({k: v for k, v in path_params.items() if k in value})
        return {"json": value} if json_media else {"form": value}

    # -- path parameters -----------------------------------------------------------------------

    def _path_value(self, operation: Operation, name: str) -> Any:
        collection = operation.path.split("{" + name + "}")[0].rstrip("/")
        fallback = self.seed.path.get(name, self._fallback(operation, name))
        source = self.sources.get((collection, name))
        if source is None:
            source = self._make_source(collection, name)
        return fallback if source is None else source.ref(fallback)

    def _fallback(self, operation: Operation, name: str) -> Any:
        parameter = next((p for p in operation.parameters(self.document, "path")
                          if p.get("name") == name), {})
        return self.values.value(parameter.get("schema", {}), name)

    def _make_source(self, collection: str, name: str) -> _Source | None:
        """Adds a call that creates (else lists) the resource; None when there is none."""
        for method in ("POST", "GET"):
            producer = find_operation(self.document, f"{method} {collection}")
            if producer is None:
                continue
            at = self._locate(producer, name)
            if at is None:
                continue
            index = self._add(producer, setup=True)
            source = _Source(index, at)
            self.sources.setdefault((collection, name), source)
            return self.sources[(collection, name)]
        return None

    def _remember_what_it_makes(self, operation: Operation, index: int) -> None:
        """A POST or GET on a collection gives ids for the paths below it."""
        if operation.method not in ("POST", "GET"):
            return
        collection = operation.path.rstrip("/")
        prefix = collection + "/{"
        for other in self.document.get("paths", {}):
            if other.startswith(prefix):
                name = other[len(prefix):].split("}")[0]
                if (collection, name) not in self.sources:
                    at = self._locate(operation, name)
                    if at is not None:
                        self.sources[(collection, name)] = _Source(index, at)

    def _locate(self, operation: Operation, name: str) -> tuple[str | int, ...] | None:
        """Where the success answer of `operation` holds the value of path parameter `name`."""
        schema = operation.success(self.document)
        if schema is None:
            return None
        for field in _names_for(name):
            found = _search(self.document, schema, field, ())
            if found is not None:
                return found
        return None


def _search(document: dict[str, Any], schema: Any, field: str,
            at: tuple[str | int, ...]) -> tuple[str | int, ...] | None:
    """Breadth-first: the shortest path of keys (and list index 0) to a property `field`."""
    level: list[tuple[Any, tuple[str | int, ...]]] = [(schema, at)]
    for _ in range(SEARCH_DEPTH + 1):
        following = []
        for node, where in level:
            node = deref(document, node)
            if not isinstance(node, dict):
                continue
            properties = node.get("properties", {})
            if field in properties:
                return (*where, field)
            following += [(sub, (*where, key)) for key, sub in properties.items()]
            if "items" in node:
                following.append((node["items"], (*where, 0)))
            for key in ("allOf", "anyOf", "oneOf"):
                following += [(sub, where) for sub in node.get(key, [])]
        level = following
    return None


def find_label(document: dict[str, Any], label: str) -> str:
    found = find_operation(document, label)
    return found.label if found else label


def build_plan(task: GenerationTask, with_responses: bool = False) -> dict[str, Any]:
    """The calls for the task's operations; with the declared responses when asked (schema oracle)."""
    planner = Planner(task)
    plan = planner.plan(task.operations)
    plan["base_url"] = task.base_url
    if with_responses:
        for step, operation in zip(plan["steps"], planner.operations, strict=True):
            step["responses"] = as_json_schema(task.openapi, operation.responses(task.openapi))
        plan["components"] = {"schemas": as_json_schema(task.openapi, needed_schemas(
            task.openapi, [step["responses"] for step in plan["steps"]]))}
    return plan

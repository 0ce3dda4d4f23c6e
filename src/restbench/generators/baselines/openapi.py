"""Reading the OpenAPI document the way the baselines need it: operations, $refs, schemas."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from restbench.benchmark.openapi_doc import path_pattern

if TYPE_CHECKING:
    from pathlib import Path

    from restbench.benchmark.models import Service

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SCHEMA_REF = re.compile(r"^#/components/schemas/([^/]+)$")


class BaselineError(Exception):
    """The document cannot serve a requirement: the generation is recorded as failed."""


def deref(document: dict[str, Any], node: Any) -> Any:
    """`node` with its top-level `$ref` (a JSON pointer into the document) followed."""
    seen = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if not ref.startswith("#/") or ref in seen:
            raise BaselineError(f"cannot follow $ref {ref!r}")
        seen.add(ref)
        node = document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise BaselineError(f"$ref {ref!r} points nowhere")
            node = node[part]
    return node


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str
    spec: dict[str, Any]  # the operation object, path-level parameters merged in

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    def parameters(self, document: dict[str, Any], where: str) -> list[dict[str, Any]]:
        found = [deref(document, p) for p in self.spec.get("parameters", [])]
        return [p for p in found if p.get("in") == where]

    def security(self, document: dict[str, Any]) -> list[dict[str, Any]]:
        return list(self.spec.get("security", document.get("security", [])))

    def needs_auth(self, document: dict[str, Any]) -> bool:
        """Declares a security requirement (also an optional one: a token is then welcome)."""
        return any(requirement for requirement in self.security(document))

    def responses(self, document: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Status code (or `4XX`, `default`) -> media type -> schema (None: not given)."""
        declared = {}
        for status, response in self.spec.get("responses", {}).items():
            content = deref(document, response).get("content") or {}
            declared[str(status)] = {media: (deref(document, body) or {}).get("schema")
                                     for media, body in content.items()}
        return declared

    def success(self, document: dict[str, Any]) -> dict[str, Any] | None:
        """The schema of the first declared 2xx JSON answer."""
        for status, content in sorted(self.responses(document).items()):
            if status.startswith("2"):
                for media, schema in content.items():
                    if media.endswith(("/json", "+json")) and schema is not None:
                        return dict(schema)
        return None


def find_operation(document: dict[str, Any], label: str) -> Operation | None:
    """The operation named like "POST /todos/{id}"; a trailing slash is optional."""
    method, _, path = label.strip().partition(" ")
    paths = document.get("paths", {})
    for candidate in (path, path.rstrip("/"), path.rstrip("/") + "/"):
        item = paths.get(candidate)
        if isinstance(item, dict) and method.lower() in item:
            spec = dict(item[method.lower()])
            own = {(p.get("name"), p.get("in")) for p in
                   (deref(document, q) for q in spec.get("parameters", []))}
            shared = [p for p in item.get("parameters", [])
                      if (deref(document, p).get("name"), deref(document, p).get("in")) not in own]
            spec["parameters"] = [*spec.get("parameters", []), *shared]
            return Operation(method.upper(), candidate, spec)
    return None


def operation_at(document: dict[str, Any], method: str, path: str) -> Operation | None:
    """The operation that answers `method` on the concrete `path` ("/notes/3"); of several
    that match, the one with the fewest path parameters ("/users/me" before "/users/{id}")."""
    matches = [(template.count("{"), template)
               for template, item in (document.get("paths") or {}).items()
               if isinstance(item, dict) and method.lower() in item
               and path_pattern(template.rstrip("/") or "/").match(path.rstrip("/") or "/")]
    return find_operation(document, f"{method} {min(matches)[1]}") if matches else None


def declares_status(operation: Operation, status: int) -> bool:
    """Whether the operation's responses name `status`, its class (`4XX`) or a `default`."""
    declared = {str(key).upper() for key in operation.spec.get("responses") or {}}
    return bool(declared & {str(status), f"{str(status)[0]}XX", "DEFAULT"})


@dataclass(frozen=True)
class MissingOperation:
    """An operation the service's data names that its OpenAPI document does not have."""

    requirement: str | None  # the requirement that lists it; None: the `auth` block's login
    operation: str

    def describe(self, data_file: Path) -> str:
        where = f"requirement {self.requirement}: operation" if self.requirement else \
            "auth.operation:"
        return f"{data_file}: {where} {self.operation!r} is not in the service's OpenAPI document"


def missing_operations(service: Service, document: dict[str, Any]) -> list[MissingOperation]:
    """The operations the service's requirements (or its `auth` block) name that `document`
    does not have."""
    named = [(requirement.id, operation) for requirement in service.requirements
             for operation in requirement.operations]
    if service.data.auth is not None:
        named.append((None, service.data.auth.operation))
    return [MissingOperation(requirement, operation) for requirement, operation in named
            if find_operation(document, operation) is None]


def operation_or_fail(document: dict[str, Any], label: str) -> Operation:
    found = find_operation(document, label)
    if found is None:
        raise BaselineError(f"operation {label!r} is not in the OpenAPI document")
    return found


def schema_refs(node: Any) -> set[str]:
    """Names of the component schemas that `node` refers to directly."""
    if isinstance(node, dict):
        names = set()
        ref = node.get("$ref")
        if isinstance(ref, str) and (match := SCHEMA_REF.match(ref)):
            names.add(match.group(1))
        for value in node.values():
            names |= schema_refs(value)
        return names
    if isinstance(node, list):
        return set().union(*(schema_refs(item) for item in node)) if node else set()
    return set()


def needed_schemas(document: dict[str, Any], nodes: list[Any]) -> dict[str, Any]:
    """The component schemas that `nodes` refer to, directly or through other schemas."""
    available = document.get("components", {}).get("schemas", {})
    needed: dict[str, Any] = {}
    pending = sorted(set().union(*(schema_refs(node) for node in nodes)) if nodes else set())
    while pending:
        name = pending.pop()
        if name in needed or name not in available:
            continue
        needed[name] = available[name]
        pending.extend(sorted(schema_refs(available[name]) - set(needed)))
    return {name: needed[name] for name in sorted(needed)}


def as_json_schema(document: dict[str, Any], schema: Any) -> Any:
    """OpenAPI 3.0 schemas say `nullable: true`; JSON Schema (and OpenAPI 3.1) say type null."""
    if not str(document.get("openapi", "")).startswith("3.0"):
        return schema
    return _without_nullable(copy.deepcopy(schema))


def _without_nullable(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_nullable(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _without_nullable(value) for key, value in node.items()}
    if node.pop("nullable", False):
        if isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
        elif "$ref" in node or "allOf" in node or "anyOf" in node or "oneOf" in node:
            node = {"anyOf": [node, {"type": "null"}]}
    return node

"""Prompts that fit the model's context: a token estimate and the ways an OpenAPI document shrinks.

The estimate is deliberately simple and errs on the high side: characters / 3 (compact JSON and
English prose run at 3.5-4.5 characters per token for common tokenizers), plus 4 per message for
the chat template. It decides only what to cut before a call; the tokens reported with results
are the endpoint's own usage counts.

Shrinking order, first step that fits wins (README, "Prompts that fit"):
1. the OpenAPI document reduced to the requirement's operations and the schemas they reference;
2. that, with long descriptions cut to their first sentence and examples removed;
3. (refine only) the HTTP trace cut to its last exchanges;
4. (refine only) the test's output cut to its last characters.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 3.0
TOKENS_PER_MESSAGE = 4
DESCRIPTION_CHARS = 120
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def estimate_tokens(messages: Iterable[dict[str, Any]],
                    tools: list[dict[str, Any]] | None = None) -> int:
    count, chars = 0, 0
    for message in messages:
        count += 1
        content = message.get("content")
        chars += len(content) if isinstance(content, str) else len(json.dumps(content or ""))
        if message.get("tool_calls"):
            chars += len(json.dumps(message["tool_calls"], separators=(",", ":")))
    if tools:
        chars += len(json.dumps(tools, separators=(",", ":")))
    return math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * count


def _refs(node: Any) -> set[str]:
    """Names of components.schemas that `node` references, directly."""
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[-1])
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def _template(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path.rstrip("/") or "/")


def operations_only(openapi: dict[str, Any], operations: Iterable[str]) -> dict[str, Any]:
    """The document with only `operations` ("METHOD /path") and the schemas they reach.

    Paths match by template, so "/todos/{id}" in a requirement finds "/todos/{todo_id}".
    """
    wanted: dict[str, set[str]] = {}
    for operation in operations:
        method, _, path = operation.strip().partition(" ")
        wanted.setdefault(_template(path.strip()), set()).add(method.lower())
    paths: dict[str, Any] = {}
    for path, item in (openapi.get("paths") or {}).items():
        methods = wanted.get(_template(path))
        if not methods or not isinstance(item, dict):
            continue
        kept = {k: v for k, v in item.items() if k in methods or k not in HTTP_METHODS}
        if any(k in HTTP_METHODS for k in kept):
            paths[path] = kept
    schemas = (openapi.get("components") or {}).get("schemas") or {}
    needed, todo = set(), _refs(paths)
    while todo:
        name = todo.pop()
        if name in needed or name not in schemas:
            continue
        needed.add(name)
        todo |= _refs(schemas[name])
    reduced = {k: v for k, v in openapi.items() if k not in ("paths", "components")}
    reduced["paths"] = paths
    components = dict(openapi.get("components") or {})
    if components:
        components["schemas"] = {name: schemas[name] for name in schemas if name in needed}
        reduced["components"] = components
    return reduced


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= DESCRIPTION_CHARS:
        return text
    end = re.search(r"[.!?](\s|$)", text)
    cut = text[:end.end()].strip() if end else text
    return cut if len(cut) <= DESCRIPTION_CHARS else cut[:DESCRIPTION_CHARS - 1] + "…"


def trimmed(node: Any, _key: str = "") -> Any:
    """Long descriptions cut to their first sentence; examples removed. Schemas are kept whole
    (a property *named* description or example stays)."""
    if isinstance(node, dict):
        kept = {}
        for key, value in node.items():
            if key in ("example", "examples") and _key != "properties":
                continue
            if key == "description" and isinstance(value, str) and _key != "properties":
                kept[key] = _first_sentence(value)
            else:
                kept[key] = trimmed(value, key)
        return kept
    if isinstance(node, list):
        return [trimmed(value) for value in node]
    return node

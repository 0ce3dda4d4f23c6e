"""Valid request values from JSON schemas: examples and defaults first, then plausible values.

Deterministic: the same schema gives the same value, except that e-mail addresses and user
names carry a counter so that two registrations in one test do not collide.
"""

from __future__ import annotations

from typing import Any

from restbench.generators.baselines.openapi import deref

# Satisfies the usual password policies: length, upper and lower case, digit, symbol.
PASSWORD = "Restbench-Pass1!"
MAX_DEPTH = 8


class ValueMaker:
    def __init__(self, document: dict[str, Any], known: dict[str, Any]) -> None:
        self.document = document
        self.known = known  # property or parameter name -> a value that works in the seed state
        self.counter = 0

    def _unique(self) -> int:
        self.counter += 1
        return self.counter

    def value(self, schema: Any, name: str = "", depth: int = 0) -> Any:
        schema = deref(self.document, schema) if isinstance(schema, dict) else {}
        if name in self.known:
            return self.known[name]
        for key in ("const", "example"):
            if key in schema:
                return schema[key]
        if schema.get("examples") and isinstance(schema["examples"], list):
            return schema["examples"][0]
        if schema.get("enum"):
            return schema["enum"][0]
        if schema.get("default") is not None:
            return schema["default"]
        if depth > MAX_DEPTH:
            return None
        for key in ("anyOf", "oneOf"):
            options = [deref(self.document, s) for s in schema.get(key, [])]
            useful = [s for s in options if s.get("type") != "null"]
            if useful:
                return self.value(useful[0], name, depth + 1)
        if schema.get("allOf"):
            merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
            for part in (deref(self.document, s) for s in schema["allOf"]):
                merged["properties"].update(part.get("properties", {}))
                merged["required"] += part.get("required", [])
            return self.value(merged, name, depth + 1)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if kind == "object" or (kind is None and "properties" in schema):
            return self.obj(schema, depth)
        if kind == "array":
            count = max(1, int(schema.get("minItems", 1)))
            return [self.value(schema.get("items", {}), name, depth + 1) for _ in range(count)]
        if kind == "integer":
            return int(self._number(schema))
        if kind == "number":
            return float(self._number(schema))
        if kind == "boolean":
            return False
        return self.string(schema, name)

    def obj(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        """Every property, but optional flags without a default: those change permissions."""
        required = set(schema.get("required", []))
        result = {}
        for prop, sub in schema.get("properties", {}).items():
            sub = deref(self.document, sub)
            if sub.get("readOnly"):
                continue
            flag = sub.get("type") == "boolean" or any(
                deref(self.document, s).get("type") == "boolean" for s in sub.get("anyOf", []))
            if prop not in required and flag and "default" not in sub and prop not in self.known:
                continue
            result[prop] = self.value(sub, prop, depth + 1)
        return result

    @staticmethod
    def _number(schema: dict[str, Any]) -> float:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        value = 1.0 if low is None else float(low) + (1 if "exclusiveMinimum" in schema else 0)
        high = schema.get("maximum")
        return min(value, float(high)) if high is not None else value

    def string(self, schema: dict[str, Any], name: str) -> str:
        lowered = name.lower()
        fmt = schema.get("format", "")
        if fmt == "email" or "email" in lowered:
            text = f"restbench{self._unique()}@example.com"
        elif fmt == "password" or "password" in lowered:
            text = PASSWORD
        elif "username" in lowered or lowered in ("login", "user", "name"):
            text = f"restbench{self._unique()}"
        elif fmt == "uuid":
            text = "00000000-0000-4000-8000-000000000001"
        elif fmt == "date-time":
            text = "2024-01-01T00:00:00Z"
        elif fmt == "date":
            text = "2024-01-01"
        elif fmt in ("uri", "url") or lowered in ("url", "image", "link"):
            text = "https://example.com/restbench.png"
        else:
            text = f"restbench {name or 'value'}".strip()
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if len(text) < low:
            text += "x" * (low - len(text))
        return text[: int(high)] if high is not None else text

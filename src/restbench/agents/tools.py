"""Tools from an OpenAPI document: one per operation, and the way back from HTTP to tool calls.

A tool's name is `<service>_<operationId>` made lower case, with every run of characters other
than a-z and 0-9 replaced by one `_` and no `_` at either end (an operation without an
operationId gets `<method>_<path>` instead). Its arguments are one JSON object: the path, query
and header parameters, plus the request body's properties at the top level; a body that is not
an object, or whose properties clash with a parameter, goes under `body` instead (arguments
that still give such a body's properties at the top level are read into `body`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from restbench.benchmark.openapi_doc import path_pattern
from restbench.serving.control import UNRECORDED_HEADERS

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
JSON_TYPES = ("application/json",)
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
BODY = "body"
DESCRIPTION_LIMIT = 1000


def tool_name(service: str, operation_id: str) -> str:
    """The documented naming rule: lower case, non-alphanumeric runs to one `_`, trimmed."""
    return re.sub(r"[^a-z0-9]+", "_", f"{service}_{operation_id}".lower()).strip("_")


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str  # path | query | header | cookie
    schema: dict[str, Any]
    required: bool


@dataclass(frozen=True)
class Tool:
    """One operation of the service, as an agent sees it."""

    name: str
    method: str  # upper case
    path: str  # the OpenAPI path template, e.g. /todos/{id}
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object
    params: tuple[Parameter, ...] = ()
    body_media_type: str | None = None  # the content type the body is sent as
    body_schema: dict[str, Any] | None = None
    body_flattened: bool = True  # body properties are top-level arguments (else under `body`)
    security: tuple[str, ...] = ()  # names of the security schemes that may authenticate it
    _pattern: re.Pattern[str] = field(default=re.compile(""), repr=False, compare=False)

    @property
    def operation(self) -> str:
        return f"{self.method} {self.path}"

    def as_openai(self, name: str | None = None) -> dict[str, Any]:
        """The tool in the OpenAI `tools` format."""
        return {"type": "function", "function": {"name": name or self.name,
                                                 "description": self.description,
                                                 "parameters": self.parameters}}

    def param(self, name: str) -> Parameter | None:
        """The parameter of that name; a header parameter's name in any letter case, as HTTP
        reads it."""
        exact = next((p for p in self.params if p.name == name), None)
        if exact is not None:
            return exact
        folded = name.lower()
        return next((p for p in self.params
                     if p.location == "header" and p.name.lower() == folded), None)

    def literal_segments(self) -> int:
        return sum(1 for part in self.path.split("/") if part and "{" not in part)


def _resolve(node: Any, document: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """`node` with every local $ref inlined; a cycle ends in an untyped object."""
    if isinstance(node, list):
        return [_resolve(item, document, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        ref = node["$ref"]
        if ref in seen or not ref.startswith("#/"):
            return {"type": "object"}
        target: Any = document
        for part in ref[2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) \
                if isinstance(target, dict) else {}
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return _resolve({**target, **siblings}, document, (*seen, ref))
    # A schema's `title` is noise for an agent; a property *named* title is a dict, and stays.
    return {key: _resolve(value, document, seen) for key, value in node.items()
            if not (key == "title" and isinstance(value, str))}


def _describe(operation: dict[str, Any], method: str, path: str, secured: bool) -> str:
    text = " ".join(part.strip() for part in (operation.get("summary", ""),
                                              operation.get("description", "")) if part)
    if len(text) > DESCRIPTION_LIMIT:
        text = text[:DESCRIPTION_LIMIT] + "…"
    head = f"{method.upper()} {path}."
    tail = " Sends the session's token when one is held (see the login rule)." if secured else ""
    return f"{head} {text}{tail}".strip()


def _body(operation: dict[str, Any], document: dict[str, Any]
          ) -> tuple[str | None, dict[str, Any] | None, bool]:
    request = _resolve(operation.get("requestBody"), document)
    if not isinstance(request, dict) or not isinstance(request.get("content"), dict):
        return None, None, False
    content = request["content"]
    media = next((t for t in (*JSON_TYPES, *FORM_TYPES) if t in content), None)
    if media is None:
        media = next((t for t in content if t.endswith("+json")), next(iter(content), None))
    if media is None:
        return None, None, False
    schema = content[media].get("schema") or {}
    return media, schema, bool(request.get("required"))


def _security(operation: dict[str, Any], document: dict[str, Any]) -> tuple[str, ...]:
    requirements = operation.get("security", document.get("security", []))
    return tuple(dict.fromkeys(name for requirement in requirements or []
                               for name in requirement))


def _path_names(path: str) -> list[str]:
    return re.findall(r"\{([^}/]+)\}", path)


def tools_from_openapi(service: str, document: dict[str, Any]) -> list[Tool]:
    """One tool per operation, in document order."""
    tools: list[Tool] = []
    names: set[str] = set()
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        shared = _resolve(item.get("parameters", []), document)
        for method in METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            own = _resolve(operation.get("parameters", []), document)
            merged = {(p["name"], p["in"]): p for p in [*shared, *own]
                      if isinstance(p, dict) and "name" in p and "in" in p}
            params = tuple(Parameter(p["name"], p["in"], p.get("schema") or {},
                                     bool(p.get("required")) or p["in"] == "path")
                           for p in merged.values() if p["in"] != "cookie")
            properties: dict[str, Any] = {}
            required: list[str] = []
            for p in params:
                schema = dict(p.schema)
                if p.location != "path" and p.location != "query":
                    schema.setdefault("description", f"{p.location} parameter")
                elif merged[(p.name, p.location)].get("description"):
                    schema.setdefault("description", merged[(p.name, p.location)]["description"])
                properties[p.name] = schema
                if p.required:
                    required.append(p.name)
            media, body_schema, body_required = _body(operation, document)
            flattened = True
            if body_schema is not None:
                body_properties = body_schema.get("properties")
                clash = isinstance(body_properties, dict) and set(body_properties) & set(properties)
                if isinstance(body_properties, dict) and not clash:
                    properties.update(body_properties)
                    if body_required:
                        required += [r for r in body_schema.get("required", [])
                                     if r in body_properties]
                else:
                    flattened = False
                    properties[BODY] = body_schema
                    if body_required:
                        required.append(BODY)
            operation_id = operation.get("operationId") or f"{method}_{path}"
            name = base = tool_name(service, operation_id)
            suffix = 2
            while name in names:
                name, suffix = f"{base}_{suffix}", suffix + 1
            names.add(name)
            security = _security(operation, document)
            parameters: dict[str, Any] = {"type": "object", "properties": properties}
            if required:
                parameters["required"] = list(dict.fromkeys(required))
            tools.append(Tool(
                name=name, method=method.upper(), path=path,
                description=_describe(operation, method, path, bool(security)),
                parameters=parameters, params=params, body_media_type=media,
                body_schema=body_schema, body_flattened=flattened, security=security,
                _pattern=path_pattern(path)))
    return tools


# --- arguments and HTTP requests -------------------------------------------------------------


def _coerce(value: Any, schema: dict[str, Any]) -> Any:
    """A text value (from a URL or a form) read as the type its schema declares."""
    if not isinstance(value, str):
        return value
    types = [schema.get("type")] + [s.get("type") for s in schema.get("anyOf", [])
                                    if isinstance(s, dict)]
    if "integer" in types and re.fullmatch(r"-?\d+", value):
        return int(value)
    if "number" in types:
        try:
            return float(value) if not re.fullmatch(r"-?\d+", value) else int(value)
        except ValueError:
            return value
    if "boolean" in types and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def fold_body(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """For a tool whose body goes under `body`: arguments that give the body's properties at the
    top level instead are read into `body`; a name that is both a parameter and a body property
    fills both (todo's PUT /todos/{id} with `{"id": 1, "title": ...}`)."""
    if tool.body_flattened or BODY in args or not isinstance(tool.body_schema, dict):
        return args
    properties = tool.body_schema.get("properties")
    if not isinstance(properties, dict) or not any(
            k in properties and tool.param(k) is None for k in args):
        return args
    body = {key: _coerce(value, properties[key]) if tool.param(key) else value
            for key, value in args.items() if key in properties}
    rest = {key: value for key, value in args.items()
            if key not in properties or tool.param(key) is not None}
    return {**rest, BODY: body}


def normalize_args(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the HTTP side can see them: parameter values typed, a header parameter
    under its declared name (HTTP header names have no letter case)."""
    result = {}
    for key, value in fold_body(tool, args).items():
        param = tool.param(key)
        if param is not None and param.location == "header":
            if param.name.lower().encode("latin-1", "replace") in UNRECORDED_HEADERS:
                continue  # the recorders never keep it (User-Agent, Accept): nothing to compare
            key = param.name
        if param is not None:
            value = _coerce(value, param.schema)
        elif tool.body_flattened and tool.body_schema and tool.body_media_type in FORM_TYPES:
            value = _coerce(value, (tool.body_schema.get("properties") or {}).get(key, {}))
        result[key] = value
    return result


@dataclass(frozen=True)
class HttpRequest:
    method: str
    path: str  # with path parameters filled in, without the query
    query: list[tuple[str, str]]
    headers: dict[str, str]
    json_body: Any = None
    form_body: dict[str, str] | None = None
    has_json_body: bool = False


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


class ArgumentError(ValueError):
    """Arguments that cannot become a request (a path parameter is missing)."""


def build_request(tool: Tool, args: dict[str, Any]) -> HttpRequest:
    args = fold_body(tool, args)
    path = tool.path
    for name in _path_names(tool.path):
        if args.get(name) is None:
            raise ArgumentError(f"missing path parameter '{name}'")
        path = path.replace("{" + name + "}", quote(_text(args[name]), safe=""))
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    rest: dict[str, Any] = {}
    for key, value in args.items():
        param = tool.param(key)
        if param is not None and param.location == "path":
            continue
        if value is None and param is not None:
            continue
        if param is not None and param.location == "query":
            values = value if isinstance(value, list) else [value]
            query += [(key, _text(v)) for v in values]
        elif param is not None and param.location == "header":
            headers[key] = _text(value)
        else:
            rest[key] = value
    if tool.body_schema is None:
        # An argument the operation does not declare still reaches the service (and the record).
        query += [(key, _text(value)) for key, value in rest.items()]
        return HttpRequest(tool.method, path, query, headers)
    if tool.body_flattened:
        body: Any = rest if rest else None
    else:
        body = rest.get(BODY)
        query += [(key, _text(value)) for key, value in rest.items() if key != BODY]
    if body is None:
        return HttpRequest(tool.method, path, query, headers)
    if tool.body_media_type in FORM_TYPES and isinstance(body, dict):
        return HttpRequest(tool.method, path, query, headers,
                           form_body={k: _text(v) for k, v in body.items() if v is not None})
    return HttpRequest(tool.method, path, query, headers, json_body=body, has_json_body=True)


# --- from recorded HTTP exchanges back to tool calls -----------------------------------------


@dataclass(frozen=True)
class RecordedCall:
    """A call the service actually saw, as a tool call."""

    name: str
    args: dict[str, Any]
    status: int | None
    operation: str  # "METHOD /path?query" as recorded

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args, "status": self.status,
                "request": self.operation}


def match_tool(tools: list[Tool], method: str, path: str) -> tuple[Tool, dict[str, str]] | None:
    """The operation a request went to; literal path segments win over parameters."""
    best: tuple[Tool, dict[str, str]] | None = None
    for tool in tools:
        if tool.method != method.upper():
            continue
        found = tool._pattern.match(path)
        if found is None:
            continue
        if best is None or tool.literal_segments() > best[0].literal_segments():
            names = _path_names(tool.path)
            best = (tool, {names[int(k[1:]) // 2]: v for k, v in found.groupdict().items()}
                    if names else {})
    return best


def _parse_body(tool: Tool, text: str) -> Any:
    if not text:
        return None
    if tool.body_media_type in FORM_TYPES:
        return dict(parse_qsl(text, keep_blank_values=True))
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def call_from_exchange(tools: list[Tool], exchange: dict[str, Any]) -> RecordedCall:
    method = str(exchange.get("method", "")).upper()
    url = str(exchange.get("url", ""))
    split = urlsplit(url)
    matched = match_tool(tools, method, split.path)
    status = exchange.get("status")
    if matched is None:
        return RecordedCall(f"{method} {split.path}", {}, status, f"{method} {url}")
    tool, path_values = matched
    args: dict[str, Any] = dict(path_values)
    for key, value in parse_qsl(split.query, keep_blank_values=True):
        if key in args and key not in path_values:
            args[key] = args[key] if isinstance(args[key], list) else [args[key]]
            args[key].append(value)
        else:
            args[key] = value
    sent = {str(name).lower(): value for name, value in
            (exchange.get("request_headers") or {}).items()}
    for param in tool.params:
        if param.location == "header" and param.name.lower() in sent:
            args[param.name] = sent[param.name.lower()]
    body = _parse_body(tool, str(exchange.get("request_body") or ""))
    if body is not None:
        if tool.body_flattened and isinstance(body, dict):
            for key, value in body.items():
                args.setdefault(key, value)
        else:
            args[BODY] = body
    return RecordedCall(tool.name, normalize_args(tool, args), status, f"{method} {url}")


def calls_from_exchanges(tools: list[Tool], exchanges: list[dict[str, Any]]) -> list[RecordedCall]:
    return [call_from_exchange(tools, exchange) for exchange in exchanges]


def tool_summary(tool: Tool) -> dict[str, Any]:
    """What `--list-tools` shows of a tool."""
    properties = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    return {"name": tool.name, "operation": tool.operation,
            "arguments": [f"{name}{'' if name in required else '?'}" for name in properties]}

"""What a status-oracle or schema-oracle test runs: this file's source is copied into each one.

A generated test must run on its own in the sandbox, so this module imports nothing but the
standard library, `requests` and (for schema checks) `jsonschema`. A plan is plain data:

    {"base_url": ..., "auth": {"header", "format"} or None, "components": {...},
     "steps": [{"label", "method", "path", "path_params", "query", "json" | "form", "auth",
                "token", "responses"}, ...]}

Any value in a step may refer to an earlier answer: {"$from": step index, "$at": [key or list
index, ...], "$default": value}; `$default` is used when that answer lacks the value, so one
failed call does not stop the calls after it.
"""

from typing import Any
from urllib.parse import quote

import requests

TIMEOUT_S = 10
JSON_SUFFIXES = ("/json", "+json")


def _body(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _dig(value: Any, path: list[Any]) -> Any:
    for key in path:
        if isinstance(value, dict) and isinstance(key, str):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and -len(value) <= key < len(value):
            value = value[key]
        else:
            return None
    return value


def _resolve(value: Any, answers: list[requests.Response]) -> Any:
    if isinstance(value, dict):
        if "$from" in value:
            found = _dig(_body(answers[value["$from"]]), value["$at"])
            return value.get("$default") if found is None else found
        return {key: _resolve(item, answers) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, answers) for item in value]
    return value


def _url(base: str, step: dict[str, Any], answers: list[requests.Response]) -> str:
    path = step["path"]
    for name, value in _resolve(step.get("path_params", {}), answers).items():
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    return base + path


def run_plan(plan: dict[str, Any]) -> list[tuple[dict[str, Any], requests.Response]]:
    """Makes every call of the plan in order; returns each step with its answer."""
    base = plan["base_url"].rstrip("/")  # the sandbox sends it to the implementation under test
    session = requests.Session()
    answers: list[requests.Response] = []
    auth_headers: dict[str, str] = {}
    for step in plan["steps"]:
        options: dict[str, Any] = {"timeout": TIMEOUT_S, "allow_redirects": False,
                                   "params": _resolve(step.get("query"), answers) or None}
        if "json" in step:
            options["json"] = _resolve(step["json"], answers)
        if "form" in step:
            options["data"] = _resolve(step["form"], answers)
        if step.get("auth"):
            options["headers"] = auth_headers
        answer = session.request(step["method"], _url(base, step, answers), **options)
        answers.append(answer)
        if step.get("token"):
            token = _dig(_body(answer), step["token"])
            if isinstance(token, str) and token:
                auth = plan["auth"]
                auth_headers = {auth["header"]: auth["format"].replace("{token}", token)}
    return list(zip(plan["steps"], answers, strict=True))


def _declared(responses: dict[str, Any], status: int) -> dict[str, Any] | None:
    for key in (str(status), f"{str(status)[0]}XX", "default"):
        if key in responses:
            return dict(responses[key])
    return None


def schema_problems(step: dict[str, Any], answer: requests.Response,
                    components: dict[str, Any]) -> list[str]:
    """What in `answer` contradicts the OpenAPI document: an undeclared status or a bad body."""
    import jsonschema

    where = f"{step['label']} answered {answer.status_code}"
    content = _declared(step["responses"], answer.status_code)
    if content is None:
        declared = ", ".join(step["responses"])
        return [f"{where}, which the document does not declare (declared: {declared})"]
    if not content:
        return []  # the document promises no body for this status
    if not answer.content:
        return [f"{where} with an empty body; declared: {', '.join(content)}"]
    media = answer.headers.get("content-type", "").split(";")[0].strip().lower()
    matches = [m for m in content if m == media or m in ("*/*", media.split("/")[0] + "/*")]
    if not matches:
        return [f"{where} with content type {media or 'none'}; declared: {', '.join(content)}"]
    schema = content[matches[0]]
    if schema is None or not media.endswith(JSON_SUFFIXES):
        return []
    try:
        body = answer.json()
    except ValueError:
        return [f"{where} with a body that is not JSON: {answer.text[:200]!r}"]
    validator = jsonschema.Draft202012Validator(
        {**schema, "components": components},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is None:
        return []
    at = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return [f"{where} with a body that breaks its schema at {at}: {error.message[:300]}"]

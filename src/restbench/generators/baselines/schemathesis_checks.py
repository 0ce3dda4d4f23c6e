"""`schemathesis`: Schemathesis's property-based contract checks on the requirement's operations.

The generated test embeds the part of the OpenAPI document these operations need (the contract
of the original service: a mutant may change what its own /openapi.json says) and, for each
operation, the valid requests (positive mode) Schemathesis generates for it: drawn once, when the
test is written (`schemathesis_cases`), with a fixed seed (derandomized Hypothesis), no example
database and a bounded number of examples. The test logs in with the service's `auth` block,
sends each operation's requests in order and checks every answer, as Schemathesis's own run
would: the first failing request ends the operation's requests and is sent once more (Hypothesis
runs a failing example again to report it; there is no shrinking, which would only add calls).

Checks, and why these:
- not_a_server_error: the crash oracle every fuzzer has.
- status_code_conformance, content_type_conformance, response_schema_conformance: the answer
  matches what the document declares for the operation.
- ignored_auth: an operation that declares authentication must refuse a request without it.
Left out: negative-data and positive-data acceptance checks, which judge input validation by the
schema alone and fail on the originals' documented rules (blank titles rejected, passwords
checked against a policy), and the stateful checks (use-after-free, resource availability),
which need Schemathesis's stateful runner and links between operations.
"""

from __future__ import annotations

import asyncio
from typing import Any

from restbench import python_ast
from restbench.errors import GeneratorError
from restbench.generators.base import GeneratedTest, GenerationTask
from restbench.generators.baselines.openapi import needed_schemas, operation_or_fail
from restbench.generators.baselines.schemathesis_cases import CaseDrawer, draw_key
from restbench.generators.baselines.source import header, literal, test_file, test_name

CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "ignored_auth")

IMPORTS = '''
import requests
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_schema_conformance,
    status_code_conformance,
)

BASE_URL = {base_url!r}  # the sandbox sends it to the implementation under test
TIMEOUT_S = 10
CHECKS = [
    {checks},
]
'''

TEST = '''
def _auth_headers():
    if LOGIN is None:
        return {{}}
    body = {{"data" if LOGIN["form"] else "json": LOGIN["body"]}}
    answer = requests.request(LOGIN["method"], BASE_URL + LOGIN["path"], timeout=TIMEOUT_S, **body)
    token = answer.json() if answer.headers.get("content-type", "").endswith("json") else None
    for key in LOGIN["token"]:
        token = token.get(key) if isinstance(token, dict) else None
    return {{LOGIN["header"]: LOGIN["format"].replace("{{token}}", token)}} if token else {{}}


def _failure(operation, drawn, session, headers):
    """Sends one drawn request and checks the answer; what failed, or None. As in a Hypothesis
    run: several failed checks at once (a FailureGroup, not an Exception) end it at once; any
    other exception has the request sent once more, and that second run is what counts (an error
    other than a failed check propagates)."""
    def send():
        operation.Case(**drawn).call_and_validate(base_url=BASE_URL, session=session,
                                                  checks=CHECKS, headers=headers,
                                                  timeout=TIMEOUT_S)

    try:
        send()
        return None
    except Exception:
        pass
    except BaseExceptionGroup as failures:
        return str(failures).strip()[:1500]
    try:
        send()
    except (AssertionError, BaseExceptionGroup) as failure:
        return str(failure).strip()[:1500]
    return "failed on the first call but not on the second"


def {name}():
    headers = _auth_headers()
    session = requests.Session()
    schema = schemathesis.openapi.from_dict(DOCUMENT)
    failures = []
    for (method, path, needs_auth), cases in zip(OPERATIONS, CASES):
        operation = schema[path][method]
        for drawn in cases:
            failure = _failure(operation, drawn, session, headers if needs_auth else None)
            if failure is not None:
                failures.append(f"{{method}} {{path}}: {{failure}}")
                break
    assert not failures, "Schemathesis found failures:\\n" + "\\n".join(failures)
'''


def trimmed_document(document: dict[str, Any], labels: list[str]) -> dict[str, Any]:
    """The document with only the given operations and the component schemas they use."""
    paths: dict[str, dict[str, Any]] = {}
    for label in labels:
        operation = operation_or_fail(document, label)
        item = document["paths"][operation.path]
        kept = paths.setdefault(operation.path, {k: v for k, v in item.items()
                                                 if k in ("parameters", "summary")})
        kept[operation.method.lower()] = item[operation.method.lower()]
    components = dict(document.get("components", {}))
    components["schemas"] = needed_schemas(document, list(paths.values()))
    info = {k: v for k, v in document.get("info", {}).items() if k in ("title", "version")}
    trimmed = {"openapi": document.get("openapi", "3.1.0"), "info": info,
               "paths": paths, "components": {k: v for k, v in components.items()
                                              if k in ("schemas", "securitySchemes",
                                                       "parameters", "requestBodies",
                                                       "responses", "headers")}}
    if "security" in document:
        trimmed["security"] = document["security"]
    return trimmed


class SchemathesisGenerator:
    name = "schemathesis"
    trusted = True  # restbench writes its tests itself: they may run without the sandbox
    refines = False
    # Drawing is cheap beside the executions it saves, and a file written anew picks up data
    # edits; the draws of one process are kept (precise and vague give the same file).
    cacheable = False

    def __init__(self, examples: str = "10") -> None:  # -a schemathesis.examples=25
        if not str(examples).isdigit() or int(examples) < 1:
            raise GeneratorError(f"generator 'schemathesis': examples must be a positive whole "
                                 f"number, not {examples!r}")
        self.examples = int(examples)
        # The DOCUMENT and CASES literals and the number of requests, by the draw they come
        # from: precise and vague write the same ones, and formatting and checking the literals
        # is most of what writing a file costs.
        self._written: dict[str, tuple[str, str, int]] = {}

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        document = task.openapi
        operations = [operation_or_fail(document, label) for label in task.operations]
        login = task.auth
        login_data = None
        if login is not None:
            login_operation = operation_or_fail(document, login.operation)
            login_data = {"method": login_operation.method, "path": login_operation.path,
                          "body": login.body, "form": login.form,
                          "token": login.token.split("."), "header": login.header,
                          "format": login.format}
        needs_auth = [[o.method, o.path, login is not None and o.needs_auth(document)]
                      for o in operations]
        trimmed = trimmed_document(document, task.operations)
        key = draw_key(trimmed, [(o.method, o.path) for o in operations], dict(task.seed.path),
                       self.examples)
        if key not in self._written:
            # Each operation's requests come from a Hypothesis run of their own, with the fixed
            # seed, so they depend on that operation alone: drawn once per operation (on the
            # document trimmed to it), not once per file. 121 files of the default run hold
            # 298 operations, 69 of them distinct.
            drawn = await asyncio.gather(*(
                CASE_DRAWER.draw_async(trimmed_document(document, [label]),
                                       [(operation.method, operation.path)],
                                       dict(task.seed.path), self.examples)
                for label, operation in zip(task.operations, operations, strict=True)))
            cases = [only for (only,) in drawn]
            if key not in self._written:  # the other wording may have awaited the same draw
                self._written[key] = (literal("DOCUMENT", trimmed),
                                      "# The requests Schemathesis drew for each operation, in "
                                      "order.\n" + checked_literal("CASES", cases),
                                      sum(len(c) for c in cases))
        document_literal, cases_literal, requests = self._written[key]
        code = test_file(
            header(self.name, task, "Schemathesis generated valid requests for each of these "
                   f"operations when this file was written ({self.examples} examples at most, "
                   f"fixed seed); the test sends them and checks every answer: "
                   f"{', '.join(CHECKS)}."),
            IMPORTS.format(base_url=task.base_url, checks=",\n    ".join(CHECKS)),
            literal("LOGIN", login_data), literal("OPERATIONS", needs_auth),
            document_literal, cases_literal,
            TEST.format(name=test_name("schemathesis", task)))
        return GeneratedTest(code, details={"examples": self.examples, "requests": requests})

    def close(self) -> None:
        """The run's generations are made: the drawing helper stops (a later draw starts a new
        one)."""
        CASE_DRAWER.close()


def checked_literal(name: str, value: Any) -> str:
    """`literal`, after checking that the text reads back as the same value (a drawn value that
    Python cannot write as a literal, such as an infinite float, would change on the way)."""
    text = literal(name, value)
    try:
        same = python_ast.literal_eval(text.partition(" = ")[2]) == value
    except (ValueError, SyntaxError):
        same = False
    if not same:
        raise GeneratorError(f"generator 'schemathesis': a drawn request for {name} cannot be "
                             f"written as a Python literal")
    return text


CASE_DRAWER = CaseDrawer()

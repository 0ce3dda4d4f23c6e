"""`schemathesis`: Schemathesis's property-based contract checks on the requirement's operations.

The generated test embeds the part of the OpenAPI document these operations need (the contract
of the original service: a mutant may change what its own /openapi.json says), logs in with the
service's `auth` block, and for each operation lets Schemathesis generate valid requests
(positive mode) and check every answer. Same file, same implementation -> same requests: a fixed
seed (derandomized Hypothesis), no example database, a bounded number of examples, and no
shrinking (which would only add calls; a failure found is a failure).

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

from typing import Any

from restbench.errors import GeneratorError
from restbench.generators.base import GeneratedTest, GenerationTask
from restbench.generators.baselines.openapi import needed_schemas, operation_or_fail
from restbench.generators.baselines.source import header, literal, test_file, test_name

CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "ignored_auth")

IMPORTS = '''
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    response_schema_conformance,
    status_code_conformance,
)

BASE_URL = {base_url!r}  # the sandbox sends it to the implementation under test
TIMEOUT_S = 10
EXAMPLES = {examples}
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


def {name}():
    headers = _auth_headers()
    session = requests.Session()
    schema = schemathesis.openapi.from_dict(DOCUMENT)
    failures = []
    for method, path, needs_auth in OPERATIONS:
        known = {{k: v for k, v in PATH_PARAMETERS.items() if "{{" + k + "}}" in path}}
        strategy = schema[path][method].as_strategy(path_parameters=known or None)

        @settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
                  print_blob=False)
        @given(case=strategy)
        def check(case):
            case.call_and_validate(base_url=BASE_URL, session=session, checks=CHECKS,
                                   headers=headers if needs_auth else None, timeout=TIMEOUT_S)

        try:
            check()
        except (AssertionError, BaseExceptionGroup) as failure:  # a FailureGroup is the latter
            failures.append(f"{{method}} {{path}}: {{str(failure).strip()[:1500]}}")
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
    cacheable = False  # writing the file is cheaper than a store lookup, and picks up data edits

    def __init__(self, examples: str = "10") -> None:  # -a schemathesis.examples=25
        if not str(examples).isdigit() or int(examples) < 1:
            raise GeneratorError(f"generator 'schemathesis': examples must be a positive whole "
                                 f"number, not {examples!r}")
        self.examples = int(examples)

    def generate(self, task: GenerationTask) -> GeneratedTest:
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
        code = test_file(
            header(self.name, task, "Schemathesis generates valid requests for each of these "
                   f"operations ({self.examples} examples at most, fixed seed) and checks every "
                   f"answer: {', '.join(CHECKS)}."),
            IMPORTS.format(base_url=task.base_url, examples=self.examples,
                           checks=",\n    ".join(CHECKS)),
            literal("LOGIN", login_data), literal("OPERATIONS", needs_auth),
            literal("PATH_PARAMETERS", dict(task.seed.path)),
            literal("DOCUMENT", trimmed_document(document, task.operations)),
            TEST.format(name=test_name("schemathesis", task)))
        return GeneratedTest(code, details={"examples": self.examples})

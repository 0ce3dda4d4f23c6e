"""`schema-oracle`: the requirement's calls; each answer must match what the document declares."""

from __future__ import annotations

from typing import Any

from restbench.generators.base import GeneratedTest, GenerationTask
from restbench.generators.baselines.plan import build_plan
from restbench.generators.baselines.source import (
    calls_digest,
    header,
    literal,
    runtime_source,
    test_file,
    test_name,
)

TEST = '''
def {name}():
    problems = [problem for step, answer in run_plan(PLAN)
                for problem in schema_problems(step, answer, PLAN["components"])]
    assert not problems, "\\n".join(problems)
'''


class SchemaOracleGenerator:
    name = "schema-oracle"
    trusted = True  # restbench writes its tests itself: they may run without the sandbox
    refines = False
    cacheable = False  # planning is cheaper than a store lookup, and picks up data edits

    def generate(self, task: GenerationTask) -> GeneratedTest:
        plan = build_plan(task, with_responses=True)
        code = test_file(
            header(self.name, task, "Makes these calls with valid inputs (logging in and "
                   "creating what a path needs first) and asserts that every answer has a status "
                   "code the OpenAPI document declares for its operation and a body that "
                   "conforms to the declared schema (checked with jsonschema)."),
            runtime_source(), literal("PLAN", plan),
            TEST.format(name=test_name("conforms", task)))
        checks = ["declared_status", "conforming_body"]
        if not any(declares_server_errors(step["responses"]) for step in plan["steps"]):
            checks.append("no_5xx")  # an undeclared status fails, and no 5xx is declared
        return GeneratedTest(code, details={"calls": len(plan["steps"]),
                                            "plan": calls_digest(plan), "checks": checks})


def declares_server_errors(responses: dict[str, Any]) -> bool:
    """Whether a call's declared responses admit a 5xx: a 5xx code, `5XX` or `default` (which
    `runtime._declared` also matches)."""
    return any(key == "default" or key.startswith("5") for key in responses)

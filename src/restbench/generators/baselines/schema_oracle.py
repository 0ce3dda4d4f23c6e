"""`schema-oracle`: the requirement's calls; each answer must match what the document declares."""

from __future__ import annotations

from restbench.generators.base import GeneratedTest, GenerationTask
from restbench.generators.baselines.plan import build_plan
from restbench.generators.baselines.source import (
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
        return GeneratedTest(code, details={"calls": len(plan["steps"])})

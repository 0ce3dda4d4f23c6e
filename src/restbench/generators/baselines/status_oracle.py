"""`status-oracle`: the requirement's calls with valid inputs; no answer may be a 5xx."""

from __future__ import annotations

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
    problems = [f"{{step['label']}} answered {{answer.status_code}}"
                for step, answer in run_plan(PLAN) if answer.status_code >= 500]
    assert not problems, "server errors: " + "; ".join(problems)
'''


class StatusOracleGenerator:
    name = "status-oracle"
    trusted = True  # restbench writes its tests itself: they may run without the sandbox
    refines = False
    cacheable = False  # planning is cheaper than a store lookup, and picks up data edits
    # A schema-oracle test of the same calls that passed implies this test's pass where no call
    # declares a 5xx (engine.implied): the run then need not execute this one there.
    implied_by = ("schema-oracle",)

    def generate(self, task: GenerationTask) -> GeneratedTest:
        plan = build_plan(task)
        code = test_file(
            header(self.name, task, "Makes these calls with valid inputs (logging in and "
                   "creating what a path needs first) and asserts only that no answer is a 5xx."),
            runtime_source(), literal("PLAN", plan), TEST.format(name=test_name("no_5xx", task)))
        return GeneratedTest(code, details={"calls": len(plan["steps"]),
                                            "plan": calls_digest(plan), "checks": ["no_5xx"]})

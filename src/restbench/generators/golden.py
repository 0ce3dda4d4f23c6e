"""The reference generator: returns each requirement's golden test."""

from __future__ import annotations

from restbench.generators.base import GeneratedTest, GenerationTask


class GoldenGenerator:
    name = "golden"
    trusted = True  # restbench writes its tests itself: they may run without the sandbox
    refines = False
    cacheable = False  # reading a file is cheaper than a store lookup, and picks up edits

    def generate(self, task: GenerationTask) -> GeneratedTest:
        path = task.service.golden_path(task.requirement)
        return GeneratedTest(path.read_text(encoding="utf-8"), details={"source": str(path)})

"""The reference generator: returns each requirement's golden test."""

from __future__ import annotations

from pathlib import Path

from restbench.benchmark.text_files import read_text
from restbench.errors import GeneratorError
from restbench.generators.base import GeneratedTest, GenerationTask


class GoldenGenerator:
    """Trusted: the harness hands it the golden file (restbench.generators.tasks.produce);
    a task itself never leads to a golden test."""

    name = "golden"
    trusted = True  # restbench writes its tests itself: they may run without the sandbox
    refines = False
    cacheable = False  # reading a file is cheaper than a store lookup, and picks up edits

    def generate(self, task: GenerationTask) -> GeneratedTest:
        raise GeneratorError(f"generator 'golden': {task.requirement_id}: the golden test comes "
                             f"from the harness, not from the task")

    def from_golden(self, path: Path) -> GeneratedTest:
        return GeneratedTest(read_text(path), details={"source": str(path)})

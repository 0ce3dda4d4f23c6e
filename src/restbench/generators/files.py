"""Scores tests written elsewhere, by any tool: one file per requirement in a folder.

For requirement TODO-07 in variant `vague` of service `todo`, the first file that exists wins:
  DIR/todo/vague/TODO-07.py, DIR/vague/TODO-07.py, DIR/todo/TODO-07.py, DIR/TODO-07.py
and each of these may also be named test_TODO-07.py.
"""

from __future__ import annotations

from pathlib import Path

from restbench.errors import GeneratorError
from restbench.generators.base import GeneratedTest, GenerationTask


class MissingTestFile(Exception):
    """No file for this requirement: the generation is recorded as failed, the run goes on."""


class FilesGenerator:
    name = "files"
    refines = False
    cacheable = False  # reading a file is cheaper than a store lookup, and picks up edits

    def __init__(self, dir: str) -> None:
        self.root = Path(dir).expanduser().resolve()
        if not self.root.is_dir():
            raise GeneratorError(f"generator 'files': {dir} is not a folder")

    def candidates(self, task: GenerationTask) -> list[Path]:
        folders = [self.root / task.service_name / task.variant.value,
                   self.root / task.variant.value, self.root / task.service_name, self.root]
        names = [f"{task.requirement_id}.py", f"test_{task.requirement_id}.py"]
        return [folder / name for folder in folders for name in names]

    def generate(self, task: GenerationTask) -> GeneratedTest:
        for path in self.candidates(task):
            if path.is_file():
                return GeneratedTest(path.read_text(encoding="utf-8"),
                                     details={"source": str(path)})
        raise MissingTestFile(f"no test file for {task.requirement_id} under {self.root}")

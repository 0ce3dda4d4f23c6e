"""Scores tests written elsewhere, by any tool: one file per requirement in a folder.

For requirement TODO-07 in variant `vague` of service `todo`, the first file that exists wins:
  DIR/todo/vague/TODO-07.py, DIR/vague/TODO-07.py, DIR/todo/TODO-07.py, DIR/TODO-07.py
and each of these may also be named test_TODO-07.py. Besides pytest files (.py), a test may be
JavaScript for Node's test runner (TODO-07.test.js or .test.mjs) or a Postman collection
(TODO-07.postman_collection.json); the ending picks the runner (`restbench.runners`).
"""

from __future__ import annotations

from pathlib import Path

from restbench.errors import GeneratorError
from restbench.generators.base import GeneratedTest, GenerationTask, oversized_file
from restbench.runners import PYTEST, available_runners, load_runner, ready_runner, runner_for_file


class MissingTestFile(Exception):
    """No file for this requirement: the generation is recorded as failed, the run goes on."""


class UnreadableTestFile(Exception):
    """A file that is there but is not taken (a link out of the folder, not text): the
    generation is recorded as failed with the reason, the run goes on."""


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
        runners = sorted(available_runners(), key=lambda name: (name != PYTEST, name))
        suffixes = [suffix for name in runners for suffix in load_runner(name).suffixes]
        names = [f"{prefix}{task.requirement_id}{suffix}" for suffix in suffixes
                 for prefix in ("", "test_")]
        return [folder / name for folder in folders for name in names]

    def generate(self, task: GenerationTask) -> GeneratedTest:
        candidates = self.candidates(task)
        for path in candidates:
            if path.is_file():
                return self._read(path)
            if path.is_symlink() or path.exists():  # there, but no file to read
                raise UnreadableTestFile(f"{path}: {_not_a_file(path, self.root)}: not read")
        raise MissingTestFile(f"no test file for {task.requirement_id} under {self.root}"
                              f"{self._near_misses(task, candidates)}")

    def _read(self, path: Path) -> GeneratedTest:
        # The folder is written by another tool: a link out of it must not carry a file of
        # this machine (/etc/shadow, a key) into the results, reports and CI artifacts.
        if not path.resolve().is_relative_to(self.root):
            raise UnreadableTestFile(f"{path} links to {path.resolve()}, outside {self.root}: "
                                     "not read")
        runner = runner_for_file(path.name)
        ready_runner(runner)  # a missing tool stops the run, naming its setup command
        if too_big := oversized_file(path.stat().st_size):
            raise UnreadableTestFile(f"{path}: {too_big}: not read")
        try:
            code = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UnreadableTestFile(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} "
                                     f"at offset {exc.start})") from None
        return GeneratedTest(code, details={"source": str(path)}, runner=runner)

    def _near_misses(self, task: GenerationTask, candidates: list[Path]) -> str:
        """Files named after the requirement that no runner takes (TODO-01.js), and the names
        that would be."""
        folders = dict.fromkeys(path.parent for path in candidates)
        found = sorted(str(path.relative_to(self.root)) for folder in folders if folder.is_dir()
                       for path in folder.glob(f"*{task.requirement_id}*") if path.is_file())
        if not found:
            return ""
        names = dict.fromkeys(path.name for path in candidates)
        return (f" ({', '.join(found)} found: a test file is named {', '.join(names)}, in "
                f"{self.root}, or its <service>/, <wording>/ or <service>/<wording>/ folder)")


def _not_a_file(path: Path, root: Path) -> str:
    """What stands at `path` where a test file was looked for."""
    if path.is_symlink():
        target = path.resolve()
        if not target.exists():
            return f"a link to {target}, which does not exist"
        if not target.is_relative_to(root):
            return f"a link to {target}, outside {root}"
        path = target
    if path.is_dir():
        return "a folder, not a file"
    return "not a regular file (a pipe, socket or device)"

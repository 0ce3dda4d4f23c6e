"""Which mutants a test never reached, for a service in Node.js: the lines each edit changes,
and V8's block coverage in the original's servers.

The analogue of `serving.reach` for an external service started as `node <script>` with no
build step (so the files the edits change are the scripts that run). The harness plans once per
service: for each mutant and benign variant whose edit changes one CommonJS file, the lines of
the original that it changes (for lines inserted between two lines, both neighbours). A server
of the original is started with `node --require node_reach_probe.cjs`, which turns on V8's
binary block coverage before the service's code is compiled and, asked after each test, names
the edits whose lines the code ran since the last question. What ran while the server started
counts as reached by every test.

Conservative wherever it cannot be exact:
- an edit whose lines declare something (`var`, `let`, `const`, `function`, `class`, an import)
  may change a scope without running (hoisting, shadowing), so it counts as reached as soon as
  the innermost function around it runs (module-level code always runs, at start);
- an edit whose file does not compile is reached by every test (the mutant cannot start);
- a file no coverage has shown yet, ES modules, files that are not scripts, services with a
  build step and anything the probe cannot answer: every mutant runs.

It relies on what every execution relies on: a reset returns the service to the same state (a
module-level cache that outlives the reset would escape it), and on the program not reading its
own source text (`Function.prototype.toString`).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import logging
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from restbench.benchmark.models import Service
from restbench.mutation import Implementation, implementations_of
from restbench.mutation.apply import edited_text
from restbench.scratch import short_temporary_directory

log = logging.getLogger(__name__)
PROBE = Path(__file__).with_name("node_reach_probe.cjs")
PROBE_ENV = "RESTBENCH_REACH"
NODE_PROGRAMS = ("node", "nodejs")
ANSWER_TIMEOUT_S = 10.0
# Words that may declare a name, or change how a file or function binds names.
_DECLARES = re.compile(r"\b(var|let|const|function|class|import|export)\b|use strict")


@dataclass(frozen=True)
class NodeEdit:
    id: str
    file: str  # inside the source tree, with /
    ranges: tuple[tuple[int, int], ...]  # in UTF-16 code units of the original file, as V8's
    scope: bool  # its lines may declare something
    source: str  # the edited file, which the probe compiles once


@dataclass(frozen=True)
class NodePlan:
    edits: tuple[NodeEdit, ...]

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(edit.id for edit in self.edits)


def plan(service: Service) -> NodePlan | None:
    """The service's plan, or None when it is not a Node.js service this applies to."""
    manifest = service.manifest
    if manifest is None or manifest.build is not None \
            or Path(manifest.start.command[0]).name not in NODE_PROGRAMS:
        return None
    tree = service.app_dir.resolve()
    edits = []
    for implementation in implementations_of(service).values():
        edit = _planned(implementation, tree)
        if edit is not None:
            edits.append(edit)
    return NodePlan(tuple(edits))


def _planned(implementation: Implementation, tree: Path) -> NodeEdit | None:
    if implementation.edit is None:
        return None
    relative, edited = edited_text(implementation)
    path = (implementation.service.root / relative).resolve()
    if not _is_common_js(path, tree):
        return None
    original = path.read_text(encoding="utf-8")
    ranges, scope = changed_lines(original, edited)
    return NodeEdit(implementation.id, path.relative_to(tree).as_posix(), ranges, scope, edited)


def _is_common_js(path: Path, tree: Path) -> bool:
    """Node.js's own rule, looked up inside the tree: .cjs, or .js under a package.json whose
    "type" is not "module"."""
    if path.suffix == ".cjs":
        return True
    if path.suffix != ".js":
        return False
    for folder in path.parents:
        package = folder / "package.json"
        if package.is_file():
            try:
                return json.loads(package.read_text(encoding="utf-8")).get("type") != "module"
            except (ValueError, AttributeError):
                return False
        if folder == tree:
            return False
    return False


def changed_lines(original: str, edited: str) -> tuple[tuple[tuple[int, int], ...], bool]:
    """The ranges of `original`'s lines that `edited` replaces or deletes, and for each run of
    inserted lines the line before and the line after it (whatever runs at the insertion point
    runs in one of them); and whether any of those lines, old or new, may declare something."""
    old_lines = original.splitlines(keepends=True)
    new_lines = edited.splitlines(keepends=True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + _utf16_length(line))
    ranges, scope = [], False
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        first, last = (i1, i2) if i2 > i1 else (max(i1 - 1, 0), min(i1 + 1, len(old_lines)))
        ranges.append((starts[first], starts[last]))
        changed = "".join(old_lines[first:last] + new_lines[j1:j2])
        scope = scope or _DECLARES.search(changed) is not None
    return tuple(ranges), scope


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class NodeReachProbe:
    """The harness's side of one original server's probe: its plan file and socket live in a
    folder of their own (a Unix socket's path must be short)."""

    def __init__(self, node_plan: NodePlan, tree: Path) -> None:
        self.plan = node_plan
        self.folder = Path(tempfile.mkdtemp(prefix="restbench-reach-",
                                            dir=short_temporary_directory()))
        self.socket_path = self.folder / "probe.sock"
        self.plan_file = self.folder / "plan.json"
        self.plan_file.write_text(json.dumps({
            "socket": str(self.socket_path),
            "edits": [{"id": edit.id, "url": (tree / edit.file).resolve().as_uri(),
                       "ranges": edit.ranges, "scope": edit.scope, "source": edit.source}
                      for edit in node_plan.edits]}), encoding="utf-8")
        self._always: frozenset[str] = frozenset()
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._off = False

    def command(self, command: list[str]) -> list[str]:
        return [command[0], "--require", str(PROBE), *command[1:]]

    @property
    def environment(self) -> dict[str, str]:
        return {PROBE_ENV: str(self.plan_file)}

    async def started(self, name: str) -> None:
        """Once the server answers: what ran while it started counts for every test."""
        self._always = frozenset(await self._reached(name))

    async def unreached(self, name: str) -> list[str]:
        """The edits that nothing ran since the last call (or since the start)."""
        return sorted(self.plan.ids - self._always - await self._reached(name))

    async def _reached(self, name: str) -> set[str]:
        """Asked of the probe; all of them when it cannot answer (then every mutant runs)."""
        if self._off:
            return set(self.plan.ids)
        try:
            if self._streams is None:
                self._streams = await asyncio.wait_for(
                    asyncio.open_unix_connection(str(self.socket_path)), ANSWER_TIMEOUT_S)
            reader, writer = self._streams
            writer.write(b"take\n")
            answer = json.loads(await asyncio.wait_for(reader.readline(), ANSWER_TIMEOUT_S))
            return set(answer["reached"])
        except (OSError, TimeoutError, ValueError, KeyError, TypeError) as exc:
            if not self._off:
                log.warning("%s: no reach probe (%r); every mutant runs", name, exc)
            self._off = True
            return set(self.plan.ids)

    async def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            with contextlib.suppress(OSError):
                await self._streams[1].wait_closed()
        shutil.rmtree(self.folder, ignore_errors=True)

"""Harness-side pool of pre-warmed test workers (see worker.py) and the sandbox's outer half."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import secrets
import select
import shutil
import signal
import socket
import sys
from pathlib import Path
from typing import Any, Protocol, Self
from urllib.parse import urlsplit

from restbench.errors import RestbenchError
from restbench.execution import channel as messages
from restbench.execution.environment import clean_environment
from restbench.execution.limits import (
    FILE_SIZE_LIMIT_BYTES,
    LONGEST_TIMEOUT_S,
    MEMORY_LIMIT_BYTES,
    MOST_WORKERS,
    PROCESS_LIMIT,
    SCRATCH_SIZE,
)
from restbench.execution.outcome import ExecutionResult, Outcome, TestReport, classify
from restbench.execution.relay import Relay
from restbench.execution.rewritten import rewritten_pyc
from restbench.runners import PYTEST, ready_runner
from restbench.runners.base import named_test_file, test_file_name
from restbench.runners.node import HEAP_LIMIT_MB
from restbench.runners.sandboxed import SCRATCH, tool_command
from restbench.runners.setup import TOOLS_ENV, tools_root
from restbench.scratch import owned_folder

log = logging.getLogger(__name__)

CANONICAL_BASE_URL = "http://localhost:8000"
DEFAULT_TIMEOUT_S = 30.0
# How long past its own time limit a worker may take to answer before it is replaced.
WORKER_GRACE_S = 15.0
START_TIMEOUT_S = 120.0
OUTPUT_HEAD = 4000
OUTPUT_TAIL = 4000
REPORT_LIMIT_BYTES = 8 * 1024**2
NO_SANDBOX_FLAG = "--no-sandbox"
_FILE_SIZE = f"file size limit ({FILE_SIZE_LIMIT_BYTES // 1024**2} MiB a file)"
_LIMIT_SIGNALS = {
    signal.SIGXCPU: "CPU time limit",
    signal.SIGXFSZ: _FILE_SIZE,
}


class AcceptingTarget(Protocol):
    """A server that serves a sandbox's canonical port itself: it is handed the listening
    sockets from the sandbox's network namespace and accepts the test's connections directly,
    with no relay in between (the built-in services' servers do; see serving.launcher)."""

    base_url: str

    async def attach(self, listeners: list[socket.socket]) -> str:
        """Starts accepting on `listeners` (and owns them); returns a handle for detach."""
        ...

    async def detach(self, handle: str) -> None: ...


class SandboxUnavailable(RestbenchError):
    """This machine cannot isolate executions (no user namespaces, or mounts refused)."""


class WorkerFailed(Exception):
    """A worker died, hung or answered something that is not the protocol."""


def imports_schemathesis(code: str) -> bool:
    """Whether a test file imports Schemathesis: it then runs in a worker that warmed
    Schemathesis up (see worker.py)."""
    return _IMPORTS_SCHEMATHESIS.search(code) is not None


_IMPORTS_SCHEMATHESIS = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:[\w.]+[ \t]*,[ \t]*)*"
                                   r"schemathesis\b", re.MULTILINE)


class _Worker:
    """A worker as the harness sees it: its channel, and a pidfd to wait for and signal it (it is
    the template's child, not this process's)."""

    def __init__(self, pid: int, pidfd: int, channel: socket.socket, log_file: Path,
                 schemathesis: bool) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.channel = channel
        self.log_file = log_file
        self.schemathesis = schemathesis  # forked from the template that warmed Schemathesis up
        channel.setblocking(False)

    async def send(self, payload: dict[str, Any], fds: list[int] | None = None) -> None:
        try:
            messages.send(self.channel, payload, fds)
        except OSError as exc:
            raise WorkerFailed(f"cannot reach the worker: {exc}") from None

    async def receive(self, timeout: float) -> tuple[dict[str, Any], list[int]]:
        try:
            async with asyncio.timeout(timeout):
                return await messages.receive(self.channel)
        except messages.ChannelClosed as exc:
            raise WorkerFailed(f"the worker's channel: {exc}; log: {self.log_tail()}") from None

    def log_tail(self) -> str:
        return _log_tail(self.log_file)

    def exited(self) -> bool:
        poll = select.poll()  # not select(): the harness may hold more than 1,024 descriptors
        poll.register(self.pidfd, select.POLLIN)
        return bool(poll.poll(0))

    async def wait(self, timeout: float) -> bool:
        """Whether the worker has exited within `timeout` seconds."""
        if self.exited():
            return True
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        loop.add_reader(self.pidfd, messages.wake, ended)
        try:
            await asyncio.wait_for(ended, timeout)
        except TimeoutError:
            return False
        finally:
            loop.remove_reader(self.pidfd)
        return True

    async def close(self) -> None:
        self.channel.close()  # the worker reads end-of-file and exits
        if not await self.wait(5):
            self.kill()
            await self.wait(5)
        os.close(self.pidfd)

    def kill(self) -> None:
        if self.exited():
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # with the test process it prepared
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)


def _log_tail(log_file: Path) -> str:
    try:
        return " | ".join(log_file.read_text(errors="replace").strip()
                          .splitlines()[-4:]) or "(empty)"
    except OSError:
        return "(none)"


class _Template:
    """The process that warmed up once and forks the workers of its kind (see worker.py)."""

    def __init__(self, process: asyncio.subprocess.Process, control: socket.socket,
                 log_file: Path) -> None:
        self.process = process
        self.control = control
        self.log_file = log_file
        self.asking = asyncio.Lock()  # one fork request and its answer at a time
        control.setblocking(False)

    async def fork(self, channel: socket.socket, log: int) -> tuple[int, int]:
        """A new worker on `channel`, writing to `log`: its pid and a pidfd of it."""
        async with self.asking:
            try:
                messages.send(self.control, {"fork": True}, [channel.fileno(), log])
                async with asyncio.timeout(START_TIMEOUT_S):
                    answer, fds = await messages.receive(self.control)
            except (OSError, messages.ChannelClosed, TimeoutError) as exc:
                raise WorkerFailed(f"the worker template: {exc or type(exc).__name__}") \
                    from None
        if "pid" not in answer or len(fds) != 1:
            messages.close_all(fds)
            raise WorkerFailed(f"the worker template answered {answer}")
        return int(answer["pid"]), fds[0]

    async def close(self) -> None:
        self.control.close()  # the template reads end-of-file and exits
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)
            await self.process.wait()


def _read_memory_file(fd: int, head: int, tail: int = 0) -> tuple[bytes, int]:
    size = os.fstat(fd).st_size
    if size <= head + tail:
        return os.pread(fd, size, 0), 0
    return os.pread(fd, head, 0) + b"\0" + os.pread(fd, tail, size - tail), size - head - tail


def _output_text(fd: int) -> str:
    data, skipped = _read_memory_file(fd, OUTPUT_HEAD, OUTPUT_TAIL)
    if not skipped:
        return data.decode(errors="replace")
    head, tail = data.split(b"\0", 1)
    return (f"{head.decode(errors='replace')}\n… [{skipped} bytes left out] …\n"
            f"{tail.decode(errors='replace')}")


def _report(fd: int, nonce: str) -> dict[str, Any] | None:
    data, skipped = _read_memory_file(fd, REPORT_LIMIT_BYTES)
    if skipped or not data:
        return None
    try:
        report = json.loads(data)
    except ValueError:
        return None
    if not isinstance(report, dict):
        return None
    if "sandbox_error" in report:  # written before the request, so without its nonce
        return report
    return report if report.get("nonce") == nonce else None


def _ended_reason(status: dict[str, Any] | None) -> str:
    if not status:
        return "the sandbox ended without a status"
    if "signal" in status:
        number = int(status["signal"])
        limit = _LIMIT_SIGNALS.get(number)  # type: ignore[call-overload]
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ \
            else str(number)
        return f"{limit} exceeded ({name})" if limit else f"killed by {name}"
    return f"exited with status {status.get('code')} before pytest reported"


_PROCESSES = f"process limit ({PROCESS_LIMIT})"
# How a limit shows inside the test, and its name in the execution's reason.
_LIMIT_ERRORS = (
    ("MemoryError", f"memory limit ({MEMORY_LIMIT_BYTES // 1024**3} GiB a process)"),
    ("[Errno 27]", _FILE_SIZE),
    ("[Errno 28]", f"scratch space limit ({SCRATCH_SIZE} for /tmp)"),
    ("[Errno 11] Resource temporarily unavailable", _PROCESSES),
)
# How it shows in the reason or output of Node.js (the node and newman runners), whose reason
# for a file that failed outside its tests names no cause.
_NODE_LIMIT_OUTPUT = (
    (re.compile(r"Reached heap limit"), f"memory limit (JS heap {HEAP_LIMIT_MB} MiB)"),
    (re.compile(r"\bEFBIG\b"), _FILE_SIZE),
    (re.compile(r"\bENOSPC\b"), f"scratch space limit ({SCRATCH_SIZE} for /tmp)"),
    (re.compile(r"\bspawn \S+ EAGAIN\b"), _PROCESSES),
)


def _name_the_limit(reason: str, output: str = "", runner: str = PYTEST,
                    output_full: bool = False) -> str:
    """`reason`, led by the limit it shows was reached, if any. `output_full`: the output
    reached the file size limit, whose errors then had nowhere to go (Node ignores SIGXFSZ and
    ends on the failed writes with no word of them)."""
    if output_full and _FILE_SIZE not in reason:
        return f"{_FILE_SIZE} reached by the test's output: {reason}"
    for marker, limit in _LIMIT_ERRORS:
        if marker in reason:
            return f"{limit} reached: {reason}"
    if runner != PYTEST:
        for pattern, limit in _NODE_LIMIT_OUTPUT:
            if pattern.search(reason) or pattern.search(output[-OUTPUT_TAIL:]):
                return f"{limit} reached: {reason}"
    return reason


def _namespace_hint(error: str) -> str:
    """What turns user namespaces on, by how creating one failed: ENOSPC is a limit of 0 (a
    container's, or a sysctl's), anything else a switch that forbids unprivileged ones."""
    if "[Errno 28]" in error:
        return "their limit is reached or 0: sysctl user.max_user_namespaces, or the " \
               "container's settings"
    return "Debian: sysctl kernel.unprivileged_userns_clone=1; Ubuntu 24.04 and later: sysctl " \
           "kernel.apparmor_restrict_unprivileged_userns=0"


def default_workers() -> int:
    """One more execution at a time than the machine has CPUs. A lane also waits (on the
    harness, a reset, a relay or a recording proxy, the next server), and the extra lane fills
    those gaps. On 2 CPUs the default `restbench run` used 188% CPU instead of 178-181% and took
    1-7% less time (two interleaved pairs), the Node service's run 0-11% less; `validate`,
    already CPU-bound at ~185%, did not change."""
    return (os.cpu_count() or 1) + 1


class Executor:
    """Runs test files against running services, `workers` at a time (default: one more than
    the CPUs, see `default_workers`).

    Workers come in two kinds: plain ones, started at once, and, from the first test that
    imports Schemathesis, up to `workers` more that warmed Schemathesis up for such tests. A
    worker that holds Schemathesis is twice the size of a plain one (71 against 35 MB of
    anonymous memory), and every fork copies its page tables and every test process's exit
    tears them down: forked from a Schemathesis-warm worker, an empty test cost ~21.5 ms of CPU
    (worker and test process) against ~17 ms from a plain one. Each kind's warm-up is made once,
    by its template process, which forks the workers of that kind (worker.py).

    With `isolated` (the default) every execution runs in its own Linux namespaces (see
    worker.py and sandbox.py) and reaches exactly one thing: the implementation under test at
    the canonical base URL, through a relay in this process. Without it, the test runs as an
    ordinary child process (trusted code only).
    """

    def __init__(self, workers: int | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 scratch_root: Path | None = None, *, isolated: bool = True) -> None:
        if not 0 < timeout_s <= LONGEST_TIMEOUT_S:
            raise RestbenchError(f"a test's time limit must be above 0 and at most "
                                 f"{LONGEST_TIMEOUT_S:g} s (a day), not {timeout_s:g}")
        self.size = min(max(1, workers or default_workers()), MOST_WORKERS)
        self.timeout_s = timeout_s
        self.isolated = isolated
        self._scratch_root = scratch_root
        self._owns_scratch = scratch_root is None
        # idle workers by kind (True: warmed up for Schemathesis), and how many of each are
        # alive or starting
        self._idle: dict[bool, asyncio.Queue[_Worker]] = {False: asyncio.Queue(),
                                                          True: asyncio.Queue()}
        self._kept = {False: 0, True: 0}
        self._all: list[_Worker] = []
        self._spawned = 0
        self._templates: dict[bool, _Template] = {}
        self._starting_template = {False: asyncio.Lock(), True: asyncio.Lock()}

    async def __aenter__(self) -> Self:
        if self._scratch_root is None:
            self._scratch_root = owned_folder("restbench-exec-")
        self._scratch_root.mkdir(parents=True, exist_ok=True)
        (self._scratch_root / "mnt").mkdir(exist_ok=True)
        try:
            spawned = await asyncio.gather(*(self._spawn(False) for _ in range(self.size)),
                                           return_exceptions=True)
        except BaseException:  # interrupted while they start: no __aexit__ will close them
            await self._close_workers()
            raise
        failures = [result for result in spawned if isinstance(result, BaseException)]
        if failures:
            await self._close_workers()
            raise failures[0]
        for worker in spawned:
            self._idle[False].put_nowait(worker)  # type: ignore[arg-type]
        self._kept[False] = self.size
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._close_workers()
        if self._owns_scratch and self._scratch_root is not None:
            shutil.rmtree(self._scratch_root, ignore_errors=True)

    async def _close_workers(self) -> None:
        await asyncio.gather(*(w.close() for w in self._all), return_exceptions=True)
        self._all.clear()
        templates, self._templates = list(self._templates.values()), {}
        await asyncio.gather(*(t.close() for t in templates), return_exceptions=True)

    async def _template(self, schemathesis: bool) -> _Template:
        """The running template of the kind, started when there is none (or it died)."""
        async with self._starting_template[schemathesis]:
            template = self._templates.get(schemathesis)
            if template is not None and template.process.returncode is None:
                return template
            if template is not None:
                await template.close()
            assert self._scratch_root is not None
            kind = "schemathesis" if schemathesis else "plain"
            log_file = self._scratch_root / f"worker-template-{kind}.log"
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            with log_file.open("wb") as log_output:
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "restbench.execution.worker", str(theirs.fileno()),
                    str(self._scratch_root / "mnt"), "1" if self.isolated else "0", kind,
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                    stderr=log_output, pass_fds=(theirs.fileno(),),
                    # the folder this process finds tools in: the worker has no HOME of ours
                    env=clean_environment(**{TOOLS_ENV: str(tools_root())}),
                    cwd=self._scratch_root, start_new_session=True)
            theirs.close()
            template = _Template(process, ours, log_file)
            self._templates[schemathesis] = template
            try:
                async with asyncio.timeout(START_TIMEOUT_S):
                    ready, _ = await messages.receive(ours)
                if not ready.get("ready"):
                    raise messages.ChannelClosed(f"it said {ready}")
            except (messages.ChannelClosed, TimeoutError) as exc:
                del self._templates[schemathesis]
                await template.close()
                raise RestbenchError(f"a test worker failed to start: {exc or 'timed out'}; "
                                     f"log: {_log_tail(log_file)}") from None
            return template

    async def _spawn(self, schemathesis: bool) -> _Worker:
        assert self._scratch_root is not None
        self._spawned += 1
        log_file = self._scratch_root / f"worker-{self._spawned}.log"
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with log_file.open("wb") as log_output:
                template = await self._template(schemathesis)
                try:
                    pid, pidfd = await template.fork(theirs, log_output.fileno())
                except WorkerFailed:  # the template died since it was started: a new one
                    if self._templates.get(schemathesis) is template:
                        del self._templates[schemathesis]
                    await template.close()
                    pid, pidfd = await (await self._template(schemathesis)).fork(
                        theirs, log_output.fileno())
        except BaseException as exc:
            ours.close()
            if isinstance(exc, WorkerFailed):
                raise RestbenchError(f"a test worker failed to start: {exc}") from None
            raise
        finally:
            theirs.close()
        worker = _Worker(pid, pidfd, ours, log_file, schemathesis)
        self._all.append(worker)
        try:
            ready, _ = await worker.receive(START_TIMEOUT_S)
        except (WorkerFailed, TimeoutError) as exc:
            raise RestbenchError(f"a test worker failed to start: {exc}") from None
        if not ready.get("ready"):
            error = str(ready.get("error"))
            raise SandboxUnavailable(
                f"cannot sandbox generated tests on this machine ({error}); the sandbox needs "
                f"unprivileged user namespaces ({_namespace_hint(error)}); {NO_SANDBOX_FLAG} "
                "runs tests without isolation (unsafe: a test can then read your files and API "
                "keys)")
        return worker

    async def _replace(self, worker: _Worker) -> None:
        worker.kill()
        await worker.wait(10)
        worker.channel.close()
        os.close(worker.pidfd)
        if worker in self._all:
            self._all.remove(worker)
        try:
            replacement = await self._spawn(worker.schemathesis)
        except BaseException:
            self._kept[worker.schemathesis] -= 1
            raise
        self._idle[worker.schemathesis].put_nowait(replacement)

    async def _take(self, schemathesis: bool) -> _Worker:
        """An idle worker of the kind; a new one while there are fewer than `size` of it."""
        idle = self._idle[schemathesis]
        if idle.empty() and self._kept[schemathesis] < self.size:
            self._kept[schemathesis] += 1
            try:
                return await self._spawn(schemathesis)
            except BaseException:
                self._kept[schemathesis] -= 1
                raise
        return await idle.get()

    async def execute(self, code: str, target: str | AcceptingTarget, *,
                      name: str = "generated", runner: str = PYTEST) -> ExecutionResult:
        """Runs `code` (a pytest file) against an implementation: a server that accepts the
        sandbox's connections itself (`AcceptingTarget`), else one listening at a base URL, to
        which a relay in this process carries them."""
        assert self._scratch_root is not None, "use 'async with Executor()'"
        base_url = target if isinstance(target, str) else target.base_url
        nonce = secrets.token_hex(16)
        # The code travels as a memory file straight to the test process: the worker, whose
        # memory later sandboxes inherit, never holds it.
        source = code.encode("utf-8")
        code_file = os.memfd_create("test")
        os.write(code_file, source)
        address = urlsplit(base_url)
        request: dict[str, Any] = {
            "nonce": nonce, "timeout_s": self.timeout_s,
            "test_name": named_test_file(name, ".py") if runner == PYTEST
            else test_file_name(ready_runner(runner), name), "runner": runner,
            "env": clean_environment(),
        }
        workdir: Path | None = None
        if not self.isolated:
            workdir = self._scratch_root / f"exec-{nonce}"
            workdir.mkdir()
            request.update(workdir=str(workdir), redirect_port=address.port)
        code_files = [code_file]
        if runner == PYTEST:
            # Compiled for the sandbox's path; pytest points the code at another path itself
            # when it loads it (without the sandbox each execution has its own folder).
            pyc = rewritten_pyc(source, f"{SCRATCH}/{request['test_name']}")
            if pyc is not None:
                code_files.append(os.memfd_create("pyc"))
                os.write(code_files[-1], pyc)
        if runner != PYTEST:
            request["command"] = tool_command(
                ready_runner(runner), request["test_name"],
                str(workdir) if workdir else SCRATCH,
                f"http://127.0.0.1:{address.port}" if workdir else CANONICAL_BASE_URL)
        worker = await self._take(runner == PYTEST and imports_schemathesis(code))
        relay: Relay | None = None
        attached: tuple[AcceptingTarget, str] | None = None
        files: list[int] = []
        try:
            await worker.send(request, code_files)
            started, files = await worker.receive(self.timeout_s + WORKER_GRACE_S)
            if started.get("event") == "started":
                if len(files) < 2 or started.get("nonce") != nonce:
                    raise WorkerFailed("the worker started the wrong execution")
                listeners = [socket.socket(fileno=fd) for fd in files[2:]]
                files = files[:2]
                if not isinstance(target, str):
                    try:
                        attached = (target, await target.attach(listeners))
                    except Exception as exc:  # noqa: BLE001 - the relay can still serve
                        log.warning("%s: no direct hand-off (%s); relaying", base_url, exc)
                if attached is None:
                    relay = Relay(listeners, (address.hostname or "127.0.0.1",
                                              address.port or 80))
                    await relay.start()
                finished, extra = await worker.receive(self.timeout_s + WORKER_GRACE_S)
                messages.close_all(extra)
            else:
                finished = started
            if finished.get("event") != "finished" or finished.get("nonce") != nonce:
                raise WorkerFailed("the worker answered out of turn")
        except (WorkerFailed, TimeoutError, OSError) as exc:
            log.warning("test worker replaced: %s", exc)
            messages.close_all(files)
            await self._replace(worker)
            return ExecutionResult(Outcome.ERROR, self.timeout_s,
                                   reason=f"worker failed: {exc or type(exc).__name__}")
        except BaseException:  # interrupted or cancelled: this worker's state is unknown
            worker.kill()  # and it goes; close() still waits for it. A cancelled execution (a
            self._kept[worker.schemathesis] -= 1  # generation out of time) frees its slot.
            raise
        else:
            self._idle[worker.schemathesis].put_nowait(worker)
        finally:
            if relay is not None:
                await relay.close()
            if attached is not None:
                await attached[0].detach(attached[1])
            for fd in code_files:
                os.close(fd)
            if workdir is not None:
                shutil.rmtree(workdir, ignore_errors=True)
        try:
            return self._result(finished, files, nonce, runner)
        finally:
            messages.close_all(files)

    def _result(self, finished: dict[str, Any], files: list[int], nonce: str,
                runner: str) -> ExecutionResult:
        duration = round(float(finished.get("duration_s") or 0.0), 4)
        if len(files) < 2:
            return ExecutionResult(Outcome.ERROR, duration,
                                   reason=f"sandbox failed: {finished.get('error', 'no files')}")
        output = _output_text(files[0])
        output_full = os.fstat(files[0]).st_size >= FILE_SIZE_LIMIT_BYTES
        report = _report(files[1], nonce)
        if finished.get("timed_out"):
            return ExecutionResult(Outcome.ERROR, duration, output,
                                   f"time limit ({self.timeout_s:g} s, --timeout) reached: "
                                   "timed out")
        if report is None:
            return ExecutionResult(Outcome.ERROR, duration, output, _name_the_limit(
                _ended_reason(finished.get("status")), output_full=output_full))
        if "crashed" in report:
            return ExecutionResult(Outcome.ERROR, duration, output,
                                   _name_the_limit(f"pytest crashed: {report['crashed']}")[:500])
        if "sandbox_error" in report:
            return ExecutionResult(Outcome.ERROR, duration, output,
                                   f"sandbox failed: {report['sandbox_error']}"[:500])
        try:
            tests = [TestReport(**t) for t in report.get("tests", [])]
            collect_errors = [str(e) for e in report.get("collect_errors", [])]
            exit_code = report.get("exit_code")
        except (TypeError, ValueError):
            return ExecutionResult(Outcome.ERROR, duration, output, "unreadable pytest report")
        outcome, reason = classify(tests, collect_errors, exit_code, False, runner)
        if outcome is Outcome.ERROR:
            reason = _name_the_limit(reason, output, runner, output_full)
        return ExecutionResult(outcome, duration, output, reason, tuple(tests))

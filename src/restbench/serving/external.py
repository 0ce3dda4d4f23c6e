"""Serving an external service (one described by a service.toml, in any language).

Each implementation is a copy of the manifest's source tree with the mutant's edit applied,
built once if the manifest has a [build] step (the built tree is cached under the fingerprint
of the copy, so a rerun or an unchanged implementation never builds again), then started as a
plain subprocess: a port chosen here, a private data folder, a clean environment (no secrets).
A `RecordingProxy` in front of it gives the harness the exchanges and the base URL, and keeps
the reset route to the harness.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import shutil
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from restbench.benchmark.manifest import Manifest, Request, fill
from restbench.cache_folder import cache_root
from restbench.errors import ServiceBuildError, ServiceStartError
from restbench.execution.environment import clean_environment
from restbench.execution.limits import SERVER_FILE_SIZE_LIMIT_BYTES, limit_file_size
from restbench.execution.namespaces import die_with_parent
from restbench.mutation import Implementation
from restbench.serving.listening import listening_ports
from restbench.serving.logs import log_tail
from restbench.serving.node_reach import NodePlan, NodeReachProbe
from restbench.serving.proxy import RecordingProxy

log = logging.getLogger(__name__)
SLOW_RESET_S = 1.0  # a reset runs before every execution: slower than this is worth a warning
BUILT_MARK = ".restbench-built"
STOP_GRACE_S = 3.0


def _tree_fingerprint(tree: Path, command: list[str]) -> str:
    digest = hashlib.sha256(repr(command).encode())
    for path in sorted(p for p in tree.rglob("*") if p.is_file() or p.is_symlink()):
        digest.update(str(path.relative_to(tree)).encode() + b"\0")
        digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return digest.hexdigest()[:24]


def _die_with_harness() -> None:
    """In the child before exec: killed when the harness dies, even by SIGKILL."""
    die_with_parent(signal.SIGKILL)


def _instance_child() -> None:
    """In an instance's child before exec: as `_die_with_harness`, and no file it writes (its
    data, its log) grows past the built-in servers' limit. SIGXFSZ is ignored, and stays so
    through exec, so a write past the limit fails (EFBIG) in any language instead of killing
    the instance: the service answers its error, as a built-in one does."""
    _die_with_harness()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit_file_size(SERVER_FILE_SIZE_LIMIT_BYTES)


_ERROR_LINE = re.compile(r"^\s*((?:[\w.]+)?(?:Error|Exception)\b.*)$")
_LOCATION_LINE = re.compile(r"^(/\S+:\d+)$")  # how Node.js names where an uncaught error is


def _summary(path: Path) -> str:
    """The error of a failed build or start, from its log: the last line naming an error and
    where it was raised, else the log's last lines."""
    try:
        return _error_of(path.read_text(errors="replace"))
    except OSError:
        return "(no log)"


def _error_of(text: str) -> str:
    """The last line of `text` naming an error and where it was raised, else its last lines."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    errors = [m.group(1) for m in map(_ERROR_LINE.match, lines) if m]
    named = [line for line in errors if not line.startswith(("Error:", "Exception:"))]
    errors = named or errors  # a SyntaxError over the build script's own "Error: failed"
    where = [m.group(1) for m in map(_LOCATION_LINE.match, lines) if m]
    if errors:
        return (errors[-1][:300] + (f" at {where[0]}" if where else "")).strip()
    return " | ".join(lines[-3:])[-400:] or "(empty log)"


async def build(implementation: Implementation, tree: Path, manifest: Manifest) -> None:
    """Runs the manifest's build in `tree` (a copy), or copies the cached result of the same
    build of the same files."""
    if manifest.build is None:
        return
    command = manifest.build.command
    key = _tree_fingerprint(tree, command)
    builds = cache_root() / "builds" / implementation.service.name
    cached = builds / key
    name = f"{implementation.service.name} {implementation.id}"
    if (cached / BUILT_MARK).is_file():
        await asyncio.to_thread(_replace_tree, cached, tree)
        return
    builds.mkdir(parents=True, exist_ok=True)
    log_file = builds / f"{key}.log"
    home = cache_root() / "home"
    home.mkdir(parents=True, exist_ok=True)
    with log_file.open("wb") as log:
        try:
            process = await asyncio.create_subprocess_exec(
                *command, cwd=tree, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
                env=clean_environment(HOME=str(home)), start_new_session=True,
                preexec_fn=_die_with_harness)
        except OSError as exc:
            raise ServiceBuildError(f"{name} did not build: cannot run {command[0]!r}: "
                                    f"{exc.strerror}") from None
        try:
            code = await asyncio.wait_for(process.wait(), manifest.build.timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            raise ServiceBuildError(f"{name} did not build: {' '.join(command)} took more than "
                                    f"{manifest.build.timeout_s:g} s; log: {log_file}") from None
    if code != 0:
        raise ServiceBuildError(f"{name} did not build: {' '.join(command)} exited with {code}: "
                                f"{_summary(log_file)}; log: {log_file}")
    await asyncio.to_thread(_store_build, tree, builds, key)


def _replace_tree(source: Path, tree: Path) -> None:
    shutil.rmtree(tree)
    shutil.copytree(source, tree, symlinks=True, ignore=shutil.ignore_patterns(BUILT_MARK))


def _store_build(tree: Path, builds: Path, key: str) -> None:
    staging = builds / f"{key}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(tree, staging, symlinks=True)
    (staging / BUILT_MARK).write_text("built\n")
    try:
        staging.rename(builds / key)
    except OSError:  # another process stored the same build first
        shutil.rmtree(staging, ignore_errors=True)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ExternalServer:
    """One running instance of an external service behind its recording proxy. Has the
    interface of `RunningServer` that executions use (reset, exchanges, attach, detach)."""

    implementation: Implementation
    replica: int
    process: asyncio.subprocess.Process
    port: int  # the instance's own port; the proxy's is in base_url
    log_file: Path
    proxy: RecordingProxy
    tree: Path
    values: dict[str, str]
    database_url: str = ""
    reset_s: list[float] = field(default_factory=list)  # how long each reset took
    reach: NodeReachProbe | None = None  # on an original's server: what each test ran
    seeded_at_start = False  # its start command's state is not known to be the reset's
    # Kept for every reset, and made without certificate checks: a client that verifies loads
    # the CA bundle (~30 ms of CPU on the harness's event loop), even for the plain-HTTP
    # requests on the loopback it only makes.
    _reset_client: httpx.AsyncClient | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.proxy.port}"

    @property
    def manifest(self) -> Manifest:
        assert self.implementation.service.manifest is not None
        return self.implementation.service.manifest

    async def attach(self, listeners: list[socket.socket]) -> str:
        return await self.proxy.attach(listeners)

    async def detach(self, handle: str) -> None:
        await self.proxy.detach(handle)

    async def reset(self) -> None:
        """Back to the seed state through the manifest's reset; forgets the exchanges."""
        reset = self.manifest.reset
        name = self._name
        started = time.perf_counter()
        if self.process.returncode is not None:
            raise ServiceStartError(f"{name} exited with {self.process.returncode}; log: "
                                    f"{self.log_tail()}")
        try:
            if reset.request is not None:
                request = Request(reset.request)
                if self._reset_client is None:
                    self._reset_client = httpx.AsyncClient(trust_env=False, verify=False,
                                                           timeout=reset.timeout_s)
                response = await self._reset_client.request(
                    request.method, f"http://127.0.0.1:{self.port}{request.path}")
                if response.status_code >= 300:
                    raise ServiceStartError(f"{name}: reset {reset.request} ([reset] request "
                                            f"of service.toml) answered {response.status_code}: "
                                            f"{response.text[:200]!r}; log: {self.log_tail()}")
            else:
                assert reset.command is not None
                await self._reset_command(reset.command, reset.timeout_s, name)
        except httpx.HTTPError as exc:
            raise ServiceStartError(f"{name}: reset failed: {exc!r}; log: "
                                    f"{self.log_tail()}") from None
        elapsed = time.perf_counter() - started
        self.reset_s.append(elapsed)
        if elapsed > SLOW_RESET_S and not any(s > SLOW_RESET_S for s in self.reset_s[:-1]):
            log.warning("%s: a reset took %.1f s; it runs before every execution (see the "
                        "service contract)", name, elapsed)
        self.proxy.clear()

    async def _reset_command(self, command: list[str], timeout_s: float, name: str) -> None:
        process = await asyncio.create_subprocess_exec(
            *(fill(part, self.values) for part in command), cwd=self.tree,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, env=self._environment(), start_new_session=True)
        try:
            _, error = await asyncio.wait_for(process.communicate(), timeout_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            raise ServiceStartError(f"{name}: reset command took more than {timeout_s:g} s") \
                from None
        if process.returncode != 0:
            raise ServiceStartError(f"{name}: reset command ([reset] command of service.toml) "
                                    f"exited with {process.returncode}: "
                                    f"{_error_of(error.decode(errors='replace'))}")

    def _environment(self) -> dict[str, str]:
        extra = {key: fill(value, self.values) for key, value in self.manifest.start.env.items()}
        return clean_environment(HOME=self.values["data_dir"], **extra)

    async def exchanges(self) -> list[dict[str, Any]]:
        return list(self.proxy.exchanges)

    async def unreached(self) -> list[str]:
        """On an original's server with a reach probe (serving.node_reach): the mutants and
        benign variants whose changed lines nothing ran since the last call; else none."""
        if self.reach is None:
            return []
        return await self.reach.unreached(self._name)

    @property
    def _name(self) -> str:
        return f"{self.implementation.service.name} {self.implementation.id}"

    async def busy_s(self) -> float:
        return self.proxy.busy_s

    def log_tail(self, limit: int = 600) -> str:
        return log_tail(self.log_file, limit)

    async def stop(self) -> None:
        await self.proxy.close()
        if self.reach is not None:
            await self.reach.close()
        if self._reset_client is not None:
            await self._reset_client.aclose()
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), STOP_GRACE_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # what it left behind in its group
            os.killpg(self.process.pid, signal.SIGKILL)


async def start_external(implementation: Implementation, replica: int, copy: Path,
                         database_url: str, reach: NodePlan | None = None) -> ExternalServer:
    """Starts one instance from `copy` (a materialized, built implementation folder) and waits
    until its ready route answers 200. With `reach` (an original's server), it runs with the
    reach probe."""
    service = implementation.service
    manifest = service.manifest
    assert manifest is not None
    name = f"{service.name} {implementation.id}"
    tree = copy / manifest.source.tree
    data_dir = copy / f"data-{replica}"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    port = _free_port()
    values = {"port": str(port), "data_dir": str(data_dir), "database_url": database_url}
    log_file = copy / f"replica-{replica}.log"
    command = [fill(part, values) for part in manifest.start.command]
    extra = {key: fill(value, values) for key, value in manifest.start.env.items()}
    probe = None if reach is None else NodeReachProbe(reach, tree)
    if probe is not None:
        command = probe.command(command)
        extra.update(probe.environment)
    with log_file.open("ab") as log:
        try:
            process = await asyncio.create_subprocess_exec(
                *command, cwd=tree, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log,
                env=clean_environment(HOME=str(data_dir), **extra), start_new_session=True,
                preexec_fn=_instance_child)
        except OSError as exc:
            if probe is not None:
                await probe.close()
            raise ServiceStartError(f"{name} did not start: cannot run {command[0]!r}: "
                                    f"{exc.strerror}") from None
    upstream = f"http://127.0.0.1:{port}"
    hidden = set()
    if manifest.reset.request is not None:
        reset = Request(manifest.reset.request)
        hidden.add((reset.method, reset.path))
    proxy = RecordingProxy(upstream, hidden)
    server = ExternalServer(implementation, replica, process, port, log_file, proxy, tree,
                            values, database_url, reach=probe)
    try:
        await _wait_ready(server, upstream, name)
        if probe is not None:
            await probe.started(name)
        await proxy.start()
    except BaseException:
        await server.stop()
        raise
    return server


def _elsewhere(server: ExternalServer) -> str:
    """Where an instance that never answered listens instead of its port, if anywhere."""
    others = sorted(listening_ports(server.process.pid) - {server.port})
    if not others:
        return ""
    ports = ", ".join(map(str, others))
    return (f": it listens on {'port' if len(others) == 1 else 'ports'} {ports}, not on "
            f"{server.port}, the port restbench gave it as {{port}} in the [start] command or "
            "env")


async def _wait_ready(server: ExternalServer, upstream: str, name: str) -> None:
    start = server.manifest.start
    ready = Request(start.ready)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + start.timeout_s
    # Plain HTTP on the loopback: verify=False spares loading the CA bundle (~30 ms of CPU on
    # the harness's event loop for every server started).
    async with httpx.AsyncClient(base_url=upstream, trust_env=False, verify=False,
                                 timeout=2.0) as client:
        answered = "no answer"  # what the ready route last gave
        while True:
            if server.process.returncode is not None:
                raise ServiceStartError(f"{name} did not start: {' '.join(start.command)} exited "
                                        f"with {server.process.returncode}: "
                                        f"{_summary(server.log_file)}")
            with contextlib.suppress(httpx.HTTPError):
                response = await client.request(ready.method, ready.path)
                if response.status_code == 200:
                    return
                answered = f"last answered {response.status_code}"
            if loop.time() > deadline:
                if answered == "no answer":
                    answered += _elsewhere(server)
                raise ServiceStartError(f"{name} did not start: {start.ready} did not answer 200 "
                                        f"within {start.timeout_s:g} s ({answered}; the "
                                        f"[start] ready route of service.toml); log: "
                                        f"{server.log_tail()}")
            await asyncio.sleep(0.02)

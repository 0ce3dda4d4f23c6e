"""The assertion-rewritten code the harness compiles once per test file (execution.rewritten):
it must be exactly what pytest itself writes, and the test process must load it."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import marshal
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType

import pytest
from _pytest.assertion import rewrite

from restbench.benchmark import load_service
from restbench.execution import ExecutionResult, Executor, Outcome, executor, rewritten
from restbench.mutation import implementations_of
from restbench.serving import ServerPool

MINI = Path(__file__).parents[1] / "fixtures" / "mini"

ASSERTS = '''"""Asserts of every kind the rewriter handles."""
import requests

LIMIT = 3


def _helper(value):
    return value * 2


class TestGroup:
    def test_comparisons(self):
        assert _helper(2) == 4, "a message"
        assert 1 < LIMIT <= 3 and not None


def test_calls_and_containers():
    data = {"a": [1, 2], "b": {"c": None}}
    assert "a" in data and data["b"]["c"] is None
    assert all(x > 0 for x in data["a"])
    assert requests.codes.ok == 200
'''
WARNS = "def test_always_true():\n    assert (1 == 2, 'a tuple is always true')\n"
BROKEN = "def test_broken(:\n    pass\n"


def test_the_pyc_is_the_one_pytest_writes_itself(tmp_path: Path) -> None:
    test_file = tmp_path / "test_asserts.py"
    test_file.write_text(ASSERTS)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-c", "/dev/null", "--rootdir", str(tmp_path), str(test_file)],
                         check=False, cwd=tmp_path, capture_output=True, text=True,
                         timeout=120,
                         env={k: v for k, v in os.environ.items()
                              if k != "PYTHONDONTWRITEBYTECODE"})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    written = (tmp_path / "__pycache__" / rewritten.pyc_name(test_file.name)).read_bytes()
    ours = rewritten.rewritten_pyc(ASSERTS.encode(), str(test_file))
    assert ours is not None
    assert ours[:16] == written[:16]  # magic number, flags, source hash
    # marshal's bytes depend on reference counts in the writing process; the code must not
    assert _code_tree(marshal.loads(ours[16:])) == _code_tree(marshal.loads(written[16:]))


def _code_tree(code: CodeType) -> list[tuple[object, ...]]:
    nested = [c for c in code.co_consts if isinstance(c, CodeType)]
    return [(code, code.co_filename, code.co_qualname),
            *(entry for c in nested for entry in _code_tree(c))]


@pytest.mark.parametrize("code", [WARNS, BROKEN, "x = 1\n" * (rewritten.SIZE_LIMIT_BYTES // 6 + 1)],
                         ids=["warns", "syntax-error", "too-large"])
def test_a_file_that_warns_or_fails_to_compile_is_left_to_its_test_process(code: str) -> None:
    assert rewritten.rewritten_pyc(code.encode(), "/tmp/test_probe.py") is None


def _run(workdir: Path, code: str, *, isolated: bool = True) -> ExecutionResult:
    async def run() -> ExecutionResult:
        async with ServerPool(workdir / "servers") as pool, \
                Executor(workers=1, timeout_s=10, scratch_root=workdir / "exec",
                         isolated=isolated) as runner:
            server = await pool.start(implementations_of(load_service(MINI))["original"])
            return await runner.execute(code, server.base_url, name="probe")

    return asyncio.run(run())


@pytest.mark.parametrize("isolated", [True, False], ids=["sandboxed", "not-isolated"])
def test_the_test_process_runs_the_code_the_harness_compiled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated: bool) -> None:
    """A pyc of other code under the source's hash: only a test process that loaded the
    harness's pyc, instead of rewriting the file, runs the passing test."""
    source = "def test_probe():\n    assert False, 'rewritten in the test process'\n"
    other = compile("def test_probe():\n    print('LOADED-FROM-THE-HARNESS')\n",
                    "/tmp/test_probe.py", "exec", dont_inherit=True)
    pyc = io.BytesIO()
    rewrite._write_pyc_fp(pyc, importlib.util.source_hash(source.encode()), other)
    monkeypatch.setattr(executor, "rewritten_pyc", lambda code, path: pyc.getvalue())
    result = _run(tmp_path, source, isolated=isolated)
    assert result.outcome is Outcome.PASS, result.output


def test_a_warning_from_rewriting_still_reaches_the_output(tmp_path: Path) -> None:
    result = _run(tmp_path, WARNS)
    assert result.outcome is Outcome.PASS
    assert "assertion is always true" in result.output, result.output


def test_each_file_is_compiled_once_while_its_pyc_fits_and_the_oldest_goes_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[bytes] = []
    real = rewritten._compiled

    def counting(source: bytes, path: str) -> bytes | None:
        compiled.append(source)
        return real(source, path)

    monkeypatch.setattr(rewritten, "_compiled", counting)
    files = [f"def test_{n}():\n    assert {n} == {n}\n".encode() for n in range(4)]
    one_pyc = len(real(files[0], "/tmp/test_a.py") or b"")
    cache = rewritten._PycCache(3 * (one_pyc + rewritten.ENTRY_OVERHEAD_BYTES))
    for _ in range(3):  # a run coming back to the same files: compiled once each
        for source in files[:3]:
            assert cache.get(source, "/tmp/test_a.py") == real(source, "/tmp/test_a.py")
    assert compiled == files[:3]
    cache.get(files[0], "/tmp/test_a.py")  # used again: files[1] is now the oldest
    cache.get(files[3], "/tmp/test_a.py")  # no room left: files[1] goes
    for source in (files[0], files[2], files[3], files[1]):
        cache.get(source, "/tmp/test_a.py")
    assert compiled == [*files, files[1]]
    assert cache.size <= cache.limit
    compiled.clear()
    assert cache.get(files[2], "/tmp/test_b.py") is not None
    assert compiled == [files[2]], "another path gives another pyc"
    assert cache.get(BROKEN.encode(), "/tmp/test_a.py") is None
    assert cache.get(BROKEN.encode(), "/tmp/test_a.py") is None
    assert compiled[1:] == [BROKEN.encode()], "a file that does not compile is remembered too"

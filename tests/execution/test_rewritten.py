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
from restbench.cache_folder import CACHE_ENV
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


def test_each_file_is_compiled_once_while_its_pyc_fits_and_the_oldest_goes_first() -> None:
    compiled: list[bytes] = []
    real = rewritten._compiled

    def counting(source: bytes, path: str) -> bytes | None:
        compiled.append(source)
        return real(source, path)

    files = [f"def test_{n}():\n    assert {n} == {n}\n".encode() for n in range(4)]
    one_pyc = len(real(files[0], "/tmp/test_a.py") or b"")
    cache = rewritten._PycCache(3 * (one_pyc + rewritten.ENTRY_OVERHEAD_BYTES), counting)
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


def _counting_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    compiled: list[str] = []
    real = rewritten._compiled

    def counting(source: bytes, path: str) -> bytes | None:
        compiled.append(path)
        return real(source, path)

    monkeypatch.setattr(rewritten, "_compiled", counting)
    return compiled


def test_a_pyc_stored_by_one_run_is_used_by_the_next(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    compiled = _counting_compiles(monkeypatch)
    source = ASSERTS.encode()
    first = rewritten._PycStore().get(source, "/tmp/test_asserts.py")
    assert first is not None and compiled == ["/tmp/test_asserts.py"]
    stored = list((tmp_path / rewritten.STORE_FOLDER).iterdir())
    assert [path.read_bytes() for path in stored] == [first]

    again = rewritten._PycStore().get(source, "/tmp/test_asserts.py")  # a later run's store
    assert again == first and compiled == ["/tmp/test_asserts.py"], "read, not compiled"
    assert rewritten._PycStore().get(source, "/tmp/test_other.py") != first
    assert rewritten._PycStore().get(source + b"\n", "/tmp/test_asserts.py") != first
    assert compiled == ["/tmp/test_asserts.py", "/tmp/test_other.py", "/tmp/test_asserts.py"]
    assert len(list((tmp_path / rewritten.STORE_FOLDER).iterdir())) == 3


@pytest.mark.parametrize("damage", ["truncated", "another source's", "garbage", "empty"])
def test_a_damaged_stored_pyc_is_compiled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                damage: str) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    source = ASSERTS.encode()
    good = rewritten._PycStore().get(source, "/tmp/test_asserts.py")
    assert good is not None
    [stored] = (tmp_path / rewritten.STORE_FOLDER).iterdir()
    other = rewritten._compiled(b"def test_x():\n    assert 1\n", "/tmp/test_asserts.py")
    stored.write_bytes({"truncated": good[:len(good) // 2], "another source's": other,
                        "garbage": good[:16] + b"\x00" * 64, "empty": b""}[damage])
    compiled = _counting_compiles(monkeypatch)

    assert rewritten._PycStore().get(source, "/tmp/test_asserts.py") == good
    assert compiled == ["/tmp/test_asserts.py"]
    assert stored.read_bytes() == good, "replaced by the sound pyc"


def test_a_cache_folder_that_cannot_be_written_only_costs_the_compile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(not_a_folder))
    compiled = _counting_compiles(monkeypatch)
    store = rewritten._PycStore()
    for _ in range(2):
        assert store.get(ASSERTS.encode(), "/tmp/test_asserts.py") is not None
    assert len(compiled) == 2
    assert store.get(WARNS.encode(), "/tmp/test_warns.py") is None
    assert store.get(BROKEN.encode(), "/tmp/test_broken.py") is None


def test_without_a_home_folder_the_pyc_is_compiled_and_not_stored(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    compiled = _counting_compiles(monkeypatch)
    assert rewritten._PycStore().get(ASSERTS.encode(), "/tmp/test_asserts.py") is not None
    assert compiled == ["/tmp/test_asserts.py"]


def test_a_full_store_keeps_its_most_recently_used_half(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(rewritten, "STORE_LIMIT_FILES", 4)
    folder = tmp_path / rewritten.STORE_FOLDER
    folder.mkdir()
    for age in range(6):  # entry-0 is the most recently used
        entry = folder / f"entry-{age}.pyc"
        entry.write_bytes(b"x")
        os.utime(entry, (1_000_000 - age, 1_000_000 - age))
    left_by_a_killed_run = folder / "half-written.tmp"
    left_by_a_killed_run.write_bytes(b"x")
    os.utime(left_by_a_killed_run, (1_000_000, 1_000_000))
    rewritten._PycStore().get(ASSERTS.encode(), "/tmp/test_asserts.py")
    names = {path.name for path in folder.iterdir()}
    kept = {name for name in names if name.startswith("entry-")}
    assert kept == {"entry-0.pyc", "entry-1.pyc"}
    assert len(names - kept) == 1, "and the new pyc; the temporary file is gone"


def test_the_pyc_is_named_as_pytest_names_it() -> None:
    assert rewritten.PYC_TAIL == rewrite.PYC_TAIL
    assert rewritten.pyc_name("test_x.py") == "test_x" + rewrite.PYC_TAIL


STORED_OR_COMPILED = """
import sys
from restbench.execution import executor, rewritten
pyc = rewritten.rewritten_pyc(sys.stdin.buffer.read(), "/tmp/test_asserts.py")
assert pyc is not None
print("_pytest.assertion.rewrite" in sys.modules)
"""


def test_a_harness_whose_pycs_are_all_stored_never_imports_the_rewriter(tmp_path: Path) -> None:
    """The rewriter costs ~120 ms of CPU to import: only a compile needs it."""
    def imports_the_rewriter() -> bool:
        ran = subprocess.run([sys.executable, "-c", STORED_OR_COMPILED], input=ASSERTS.encode(),
                             env={**os.environ, CACHE_ENV: str(tmp_path)}, capture_output=True,
                             check=True, timeout=60)
        return ran.stdout.decode().strip() == "True"

    assert imports_the_rewriter(), "the first harness compiles"
    assert not imports_the_rewriter(), "the next one reads the store"

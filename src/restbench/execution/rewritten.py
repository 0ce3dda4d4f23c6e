"""A test file's assertion-rewritten code, compiled once in the harness instead of once per
execution.

pytest rewrites a test module's asserts (parse, rewrite the tree, compile) every time a fresh
test process imports it: 2-3 ms of CPU, and a pyc written into the test's scratch folder. A file
runs once per implementation (the original, each mutant of its requirement, the benign
variants), so the harness compiles it once, exactly as pytest would, and the test process puts
the result where pytest looks for its cached pyc (`__pycache__/NAME.cpython-311-pytest-X.pyc`,
checked against the source's hash, PEP 552). pytest then loads it instead of rewriting.

Exactness: the same pytest function rewrites the same bytes under the same file name and with the
options the workers configure (no `enable_assertion_pass_hook`, the only option the rewriter
reads). A file whose compilation warns (a tuple asserted, an invalid escape) or fails gets no
pyc: its test process rewrites it itself, so the warning or the error is in its own output as
before. Compiling is not running: nothing of the test executes in the harness.

The pycs are also kept on disk between runs (`pyc/` in the cache folder, see cache_folder), named
by a digest of all they depend on: Python's bytecode version, pytest's version, the path and the
source. Golden tests and the baselines' tests are the same from run to run; rewriting a file
costs the harness ~5-10 ms of CPU (~1 s for a three-service `validate`). A stored pyc is used
only if its header carries the source's hash and its code loads; anything else is compiled
again, and a folder that cannot be read or written is simply not used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import inspect
import io
import marshal
import os
import sys
import tempfile
import time
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from _pytest import __version__ as PYTEST_VERSION

from restbench import python_ast
from restbench.cache_folder import cache_root

SIZE_LIMIT_BYTES = 1024**2  # larger files are rewritten by their test process, as pytest does
# The pycs kept, by size, so that a run's files all fit (the default run's 668 are 3-25 KiB
# each, 7.3 MiB in all). A cache counted in files (512) was too small for that run: executions
# come back to a file after hundreds of others, and it compiled its 668 files 1,789 times, ~6 s
# of CPU on the event loop.
CACHE_LIMIT_BYTES = 128 * 1024**2
ENTRY_OVERHEAD_BYTES = 200  # the key and the bookkeeping: a file remembered as None counts too
PYC_FOLDER = "__pycache__"
STORE_FOLDER = "pyc"  # in the cache folder
STORE_LIMIT_FILES = 10_000  # beyond it, the least recently used half goes (3-25 KiB each)
PYC_FLAGS = b"\x03\x00\x00\x00"  # hash-based and checked (PEP 552), as pytest writes them
# The end of a rewritten pyc's name, as pytest's rewrite module spells it (`PYC_TAIL`, which
# tests/execution/test_rewritten.py compares with this). Spelled here because that module costs
# the harness ~120 ms of CPU to import, needed only when a file is compiled, not when its pyc
# comes from the disk store.
PYC_TAIL = f".{sys.implementation.cache_tag}-pytest-{PYTEST_VERSION}.pyc"


@functools.cache
def hash_checked() -> bool:
    """Whether this pytest checks its pycs against the source's hash. pytest before 9.2
    checked them against the source's mtime, which only the test process knows: with such a
    pytest every test process rewrites its file itself, as before."""
    from _pytest.assertion import rewrite

    return "source_hash" in inspect.signature(rewrite._write_pyc_fp).parameters


def rewritten_pyc(source: bytes, path: str) -> bytes | None:
    """The pyc pytest would write for `source` imported as a test module from `path` (the path
    the test process sees), or None when its test process must rewrite it itself."""
    if len(source) > SIZE_LIMIT_BYTES:
        return None
    return _CACHE.get(source, path)


def pyc_name(test_name: str) -> str:
    """The file name of a test module's pyc in `PYC_FOLDER`, as pytest names it."""
    return test_name.removesuffix(".py") + PYC_TAIL


def place_pyc(workdir: str, test_name: str, pyc: bytes) -> None:
    """Puts `pyc` where pytest looks for the test module's rewritten code."""
    folder = Path(workdir, PYC_FOLDER)
    folder.mkdir(exist_ok=True)
    (folder / pyc_name(test_name)).write_bytes(pyc)


class _PycCache:
    """Least recently used pycs up to `limit` bytes, by a digest of the path and the source
    (the sources themselves are not kept). A file that cannot be compiled here is remembered
    as such (None)."""

    def __init__(self, limit: int, produce: Callable[[bytes, str], bytes | None]) -> None:
        self.limit = limit
        self.produce = produce  # a pyc, for a (source, path) not in memory
        self.size = 0
        self._pycs: OrderedDict[bytes, bytes | None] = OrderedDict()

    def get(self, source: bytes, path: str) -> bytes | None:
        key = hashlib.sha256(path.encode() + b"\0" + source).digest()
        if key in self._pycs:
            self._pycs.move_to_end(key)
            return self._pycs[key]
        pyc = self._pycs[key] = self.produce(source, path)
        self.size += len(pyc or b"") + ENTRY_OVERHEAD_BYTES
        while self.size > self.limit and len(self._pycs) > 1:
            self.size -= len(self._pycs.popitem(last=False)[1] or b"") + ENTRY_OVERHEAD_BYTES
        return pyc


class _PycStore:
    """The pycs of earlier runs, one file each in the cache folder (see the module's
    docstring)."""

    def __init__(self) -> None:
        self.pruned = False

    def get(self, source: bytes, path: str) -> bytes | None:
        """The pyc of `source` at `path`: the stored one if it is sound, else compiled (and
        stored)."""
        try:
            folder = cache_root() / STORE_FOLDER
        except RuntimeError:  # no home folder to be found, and no RESTBENCH_CACHE_DIR
            return _compiled(source, path)
        stored = folder / self._name(source, path)
        with contextlib.suppress(OSError):
            pyc = stored.read_bytes()
            if _sound(pyc, source, path):
                with contextlib.suppress(OSError):
                    os.utime(stored)  # recently used: kept when the folder is pruned
                return pyc
        pyc = _compiled(source, path)
        if pyc is not None:
            with contextlib.suppress(OSError):
                self._store(folder, stored, pyc)
        return pyc

    @staticmethod
    def _name(source: bytes, path: str) -> str:
        digest = hashlib.sha256()
        # PYC_TAIL names the interpreter and pytest's version, the magic number the bytecode's
        for part in (importlib.util.MAGIC_NUMBER, PYC_TAIL.encode(), path.encode(),
                     source):
            digest.update(len(part).to_bytes(8, "little") + part)
        return digest.hexdigest()[:40] + ".pyc"

    def _store(self, folder: Path, stored: Path, pyc: bytes) -> None:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.pruned:
            self.pruned = True
            _prune(folder)
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(pyc)
            os.replace(temporary, stored)  # whole or not at all, for a concurrent run too
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def _sound(pyc: bytes, source: bytes, path: str) -> bool:
    """Whether `pyc` is a whole pyc of `source` at `path`, as `_compiled` makes them."""
    header = importlib.util.MAGIC_NUMBER + PYC_FLAGS + importlib.util.source_hash(source)[:8]
    if not pyc.startswith(header):
        return False
    try:
        code = marshal.loads(pyc[len(header):])
    except (EOFError, ValueError, TypeError):
        return False
    return isinstance(code, types.CodeType) and code.co_filename == path


def _prune(folder: Path) -> None:
    """Keeps the folder within STORE_LIMIT_FILES: beyond it, removes the least recently used
    half (and temporary files of runs that were killed while writing)."""
    entries = []
    for entry in os.scandir(folder):
        with contextlib.suppress(OSError):
            if entry.name.endswith(".tmp"):
                if entry.stat().st_mtime < time.time() - 3600:
                    os.unlink(entry.path)
                continue
            entries.append((entry.stat().st_mtime, entry.path))
    if len(entries) <= STORE_LIMIT_FILES:
        return
    entries.sort()
    for _, name in entries[:len(entries) - STORE_LIMIT_FILES // 2]:
        with contextlib.suppress(OSError):
            os.unlink(name)


_STORE = _PycStore()
_CACHE = _PycCache(CACHE_LIMIT_BYTES, _STORE.get)


def _compiled(source: bytes, path: str) -> bytes | None:
    """The pyc of `source` at `path`, or None if it must be left to the test process (a
    stored one is only ever one this made, so the store needs no check of `hash_checked`)."""
    if not hash_checked():
        return None
    from _pytest.assertion import rewrite

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tree = python_ast.parse(source, path)
            rewrite.rewrite_asserts(tree, source, path, None)
            code = python_ast.compile_tree(tree, path)
        except Exception:  # noqa: BLE001 - any failure is the test process's to report
            return None
    if caught:
        return None
    pyc = io.BytesIO()
    rewrite._write_pyc_fp(pyc, importlib.util.source_hash(source), code)
    return pyc.getvalue()

"""Finding and checking generators."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import ClassVar

import pytest

from restbench.engine import RunConfig, run_benchmark
from restbench.errors import GeneratorError, RestbenchError
from restbench.generators import GeneratedTest, GenerationTask, GeneratorSpec, load_generator
from restbench.generators.base import Cost
from restbench.generators.registry import available_generators
from tests.cli_helpers import restbench, start_interruptible

MINI = Path(__file__).parents[1] / "fixtures" / "mini"


class EchoStatusGenerator:
    """A third-party style async generator that asserts one status code and reports a cost."""

    name = "echo-status"
    refines = False

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        path = task.operations[0].split()[1].replace("{name}", "a")
        method = task.operations[0].split()[0].lower()
        code = (f"import requests\n\ndef test_status():\n"
                f"    r = requests.{method}('{task.base_url}{path}', timeout=10)\n"
                f"    assert r.status_code == 200\n")
        return GeneratedTest(code, Cost(usd=0.25, input_tokens=100, output_tokens=20))


class Incomplete:
    name = "incomplete"


class NotATest(EchoStatusGenerator):
    """Returns the code itself, not a GeneratedTest."""

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        return (await super().generate(task)).code  # type: ignore[return-value]


class BadlyFilled(EchoStatusGenerator):
    """Returns a GeneratedTest whose parts have the wrong types."""

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        return GeneratedTest(12345, "free")  # type: ignore[arg-type]


class OwnModel(EchoStatusGenerator):
    """Calls a model of its own (here none): restbench's endpoints and keys are not its concern."""

    uses_model = True


class Plain:
    """A plain generate() that takes a while: it must not hold up the event loop."""

    name = "plain"
    refines = False
    calls: ClassVar[list[tuple[bool, int]]] = []  # (on the main thread, calls running at once)
    running = 0

    def generate(self, task: GenerationTask) -> GeneratedTest:
        Plain.running += 1
        Plain.calls.append((threading.current_thread() is threading.main_thread(), Plain.running))
        time.sleep(0.3)
        Plain.running -= 1
        return GeneratedTest("def test_x():\n    pass\n")


class Stuck:
    """A plain generate() that says it started (a file), then takes far longer than any test."""

    name = "stuck"
    refines = False

    def __init__(self, started: str) -> None:
        self.started = Path(started)

    def generate(self, task: GenerationTask) -> GeneratedTest:
        self.started.touch()
        time.sleep(300)
        return GeneratedTest("")


class Huge(EchoStatusGenerator):
    """Returns a test over the size a generated test may have."""

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        return GeneratedTest("# " + "x" * (2 * 2**20) + "\n", Cost(0.5, 10, 20))


class NotANumber(EchoStatusGenerator):
    """Before: sqlite3.IntegrityError (NOT NULL constraint failed: generations.cost_usd), the
    run ended with a traceback, and every rerun again."""

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        return GeneratedTest((await super().generate(task)).code, Cost(float("nan")))


class PastSQLite(EchoStatusGenerator):
    """Before: OverflowError (Python int too large to convert to SQLite INTEGER)."""

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        return GeneratedTest((await super().generate(task)).code, Cost(0.0, 10**30, 0))


class LoneSurrogate(EchoStatusGenerator):
    """Before: UnicodeEncodeError when the store kept the code, a traceback."""

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        return GeneratedTest("def test_a():\n    s = '\ud800'\n")


class UnknownRunner(EchoStatusGenerator):
    """Before: stored, then the run stopped (exit 2) at its execution, and every rerun."""

    async def generate(self, task: GenerationTask) -> GeneratedTest:
        return GeneratedTest((await super().generate(task)).code, runner="nosuch")


class Exits:
    """A plain generate() that raises SystemExit. Before: the command exited 3, silently."""

    name = "exits"
    refines = False

    def generate(self, task: GenerationTask) -> GeneratedTest:
        raise SystemExit(3)


class Picky:
    name = "picky"
    refines = False

    def __init__(self, temperature: str = "0") -> None:
        self.temperature = float(temperature)

    def generate(self, task: GenerationTask) -> GeneratedTest:
        return GeneratedTest("")


class ClosingGenerator(EchoStatusGenerator):
    """Counts its close() calls; one whose close fails must not cost the run its results."""

    closed: ClassVar[list[str]] = []
    fail_on_close = False

    def close(self) -> None:
        ClosingGenerator.closed.append(self.name)
        if ClosingGenerator.fail_on_close:
            raise OSError("the model's connection pool was already gone")


def test_builtins_are_entry_points() -> None:
    assert {"golden", "files"} <= set(available_generators())


def test_module_attribute_generator_runs_and_its_cost_is_summed(tmp_path: Path) -> None:
    spec = GeneratorSpec(f"{__name__}:EchoStatusGenerator")
    result = asyncio.run(run_benchmark(RunConfig(services=(str(MINI),), generators=(spec,),
                                                 output_dir=tmp_path)))
    row = result.rows[0]
    assert row.cost_usd == pytest.approx(0.5)
    assert (row.input_tokens, row.output_tokens) == (200, 40)
    # valid (200 on the original) but blind to every mutant: they break values or the 404
    assert row.score.validity_rate == 1.0 and row.score.killed == 0


@pytest.mark.parametrize("fail_on_close", [False, True])
def test_a_generator_is_closed_once_its_generations_are_made(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
        fail_on_close: bool) -> None:
    monkeypatch.setattr(ClosingGenerator, "closed", [])
    monkeypatch.setattr(ClosingGenerator, "fail_on_close", fail_on_close)
    spec = GeneratorSpec(f"{__name__}:ClosingGenerator")
    result = asyncio.run(run_benchmark(RunConfig(services=(str(MINI),), generators=(spec,),
                                                 output_dir=tmp_path)))
    assert ClosingGenerator.closed == ["echo-status"]  # once, for all its generations
    assert result.rows[0].score.validity_rate == 1.0
    failed = [r.getMessage() for r in caplog.records if "close() failed" in r.getMessage()]
    expected = "generator ClosingGenerator: close() failed: the model's connection pool was " \
        "already gone"
    assert failed == ([expected] if fail_on_close else [])


def test_bad_generators_are_named_in_the_error() -> None:
    with pytest.raises(GeneratorError, match="unknown generator 'nope'"):
        load_generator(GeneratorSpec("nope"))
    with pytest.raises(GeneratorError, match="cannot import no_such_module"):
        load_generator(GeneratorSpec("no_such_module:thing"))
    with pytest.raises(GeneratorError, match="has no attribute Missing"):
        load_generator(GeneratorSpec(f"{__name__}:Missing"))
    with pytest.raises(GeneratorError, match="no 'refines' attribute, no generate"):
        load_generator(GeneratorSpec(f"{__name__}:Incomplete"))
    with pytest.raises(GeneratorError, match="bad arguments"):
        load_generator(GeneratorSpec("golden", {"dir": "x"}))


def test_a_generator_that_returns_no_test_fails_its_generations_and_the_run_goes_on(
        tmp_path: Path) -> None:
    specs = tuple(GeneratorSpec(f"{__name__}:{name}") for name in (
        "NotATest", "EchoStatusGenerator", "BadlyFilled", "Huge", "NotANumber", "PastSQLite",
        "LoneSurrogate", "UnknownRunner", "Exits"))
    result = asyncio.run(run_benchmark(RunConfig(services=(str(MINI),), generators=specs,
                                                 output_dir=tmp_path)))
    validity = {(row.generator, row.variant): row.score.validity_rate for row in result.rows}
    assert validity == {(spec.name, variant): 1.0 if spec is specs[1] else 0.0
                        for spec in specs for variant in ("precise", "vague")}
    with sqlite3.connect(result.store_path) as store:
        errors = dict(store.execute("SELECT DISTINCT generator, error FROM generations "
                                    "WHERE status = 'error'"))
    assert errors == {
        specs[0].name: "TypeError: generate() returned str, not GeneratedTest",
        specs[2].name: "TypeError: generate() returned a GeneratedTest whose code is int, not str",
        specs[3].name: "TypeError: generate() returned a test of 2.0 MiB, over the 1 MiB a "
                       "generated test may have",
        specs[4].name: "TypeError: generate() returned a GeneratedTest whose cost is "
                       "Cost(usd=nan, input_tokens=0, output_tokens=0), not Cost(usd, "
                       "input_tokens, output_tokens) of finite numbers, 0 or more",
        specs[5].name: "TypeError: generate() returned a GeneratedTest whose cost is "
                       f"Cost(usd=0.0, input_tokens={10**30}, output_tokens=0), not Cost(usd, "
                       "input_tokens, output_tokens) of finite numbers, 0 or more",
        specs[6].name: "TypeError: generate() returned a GeneratedTest whose code is not text "
                       "(a lone surrogate at character 23)",
        specs[7].name: "TypeError: generate() returned a GeneratedTest whose runner cannot be "
                       "used: unknown runner 'nosuch' (installed: newman, node, pytest; or give "
                       "module:attribute)",
        specs[8].name: "SystemExit: 3"}
    # the over-limit test was paid for: its cost stays with the failure
    with sqlite3.connect(result.store_path) as store:
        paid = set(store.execute("SELECT cost_usd, input_tokens, output_tokens FROM generations "
                                 "WHERE generator = ?", (specs[3].name,)))
    assert paid == {(0.5, 10, 20)}


def test_a_constructor_that_refuses_its_arguments_is_one_error() -> None:
    with pytest.raises(GeneratorError, match=r"generator '.*:Picky' with arguments "
                       r"\{'temperature': 'hot'\} failed to start: ValueError: could not "
                       r"convert string to float: 'hot'"):
        load_generator(GeneratorSpec(f"{__name__}:Picky", {"temperature": "hot"}))


def test_a_module_in_the_current_folder_is_found_after_everything_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "restbench_here_gen.py").write_text(
        "from restbench.generators import GeneratedTest\n"
        "class Here:\n    name = 'here'\n    refines = False\n"
        "    def generate(self, task):\n        return GeneratedTest('')\n")
    (tmp_path / "restbench_broken_gen.py").write_text("raise RuntimeError('half written')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", ".")])
    assert load_generator(GeneratorSpec("restbench_here_gen:Here")).name == "here"
    assert __import__("sys").path[-1] == str(tmp_path)
    with pytest.raises(GeneratorError, match="importing restbench_broken_gen failed: "
                       "RuntimeError: half written"):
        load_generator(GeneratorSpec("restbench_broken_gen:Thing"))
    # Before: the command exited 5 without a word
    (tmp_path / "restbench_exiting_gen.py").write_text("raise SystemExit(5)\n")
    with pytest.raises(GeneratorError, match="importing restbench_exiting_gen failed: "
                       "SystemExit: 5"):
        load_generator(GeneratorSpec("restbench_exiting_gen:Thing"))


def test_only_generators_that_use_restbench_endpoints_need_its_keys(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_API_KEY", "RESTBENCH_LLM_API_KEY", "OPENAI_BASE_URL",
                     "RESTBENCH_LLM_BASE_URL", "RESTBENCH_LLM_CONFIG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(tmp_path)  # no restbench-models.toml here

    def run(generator: str) -> list[tuple[str, str]]:
        config = RunConfig(services=(str(MINI),), generators=(GeneratorSpec(generator),),
                           models=("their-model",), output_dir=tmp_path / generator)
        return [(row.model, row.variant) for row in asyncio.run(run_benchmark(config)).rows]

    assert run(f"{__name__}:OwnModel") == [("their-model", "precise"), ("their-model", "vague")]
    with pytest.raises(RestbenchError, match="model 'their-model': no API key"):
        run("single-step")


def test_a_plain_generate_runs_off_the_event_loop_one_call_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Plain, "calls", [])
    config = RunConfig(services=(str(MINI),), generators=(GeneratorSpec(f"{__name__}:Plain"),),
                       output_dir=tmp_path)
    asyncio.run(run_benchmark(config))
    assert Plain.calls == [(False, 1)] * 4  # 2 requirements x 2 wordings
    with sqlite3.connect(tmp_path / "results.sqlite3") as store:
        times = [row[0] for row in store.execute("SELECT wall_s FROM generations")]
    # each generation's own 0.3 s, not the wait for the calls queued before it
    assert len(times) == 4 and max(times) < 0.9, times


def test_ctrl_c_does_not_wait_for_a_plain_generate_under_way(tmp_path: Path) -> None:
    started = tmp_path / "started"
    process = start_interruptible("run", "-s", MINI, "-g", "tests.generators.test_registry:Stuck", "-a",
                                  f"started={started}", "-o", tmp_path / "out",
                                  cwd=Path(__file__).parents[2])
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()[1]
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "rerun the same command to resume" in stderr


def test_a_generation_of_an_edited_generator_is_not_reused(tmp_path: Path) -> None:
    """Before: the store's generations were keyed by the generator's name and arguments only,
    so a rerun after editing one's own generator silently scored the old code's tests."""
    source = tmp_path / "restbench_edited_gen.py"

    def write_generator(body: str) -> None:
        source.write_text("from restbench.generators import GeneratedTest\n"
                          "class Gen:\n    name = 'edited'\n    refines = False\n"
                          "    def generate(self, task):\n"
                          f"        return GeneratedTest('def test_it():\\n    {body}\\n')\n")

    def run() -> str:
        done = restbench("run", "-s", MINI, "-R", "MINI-01", "-V", "precise",
                         "-g", "restbench_edited_gen:Gen", "-o", tmp_path / "out", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    write_generator("pass")
    assert "1 generations made, 0 reused" in run()
    assert "0 generations made, 1 reused" in run()
    write_generator("assert 1 + 1 == 2")
    assert "1 generations made, 0 reused" in run()
    with sqlite3.connect(tmp_path / "out" / "results.sqlite3") as db:
        codes = sorted(code for (code,) in db.execute("SELECT code FROM generations"))
    assert codes == ["def test_it():\n    assert 1 + 1 == 2\n", "def test_it():\n    pass\n"]


SLOW_GENERATORS = '''import asyncio
import time

from restbench.generators import GeneratedTest

CODE = "def test_it():\\n    pass\\n"


class Hangs:
    name, refines, cacheable = "hangs", False, False

    async def generate(self, task):
        if task.requirement_id == "MINI-01":
            await asyncio.sleep(3600)
        return GeneratedTest(CODE)


class PlainHangs:
    name, refines, cacheable = "plain-hangs", False, False

    def generate(self, task):
        if task.requirement_id == "MINI-01" and task.variant.value == "precise":
            time.sleep(3600)
        return GeneratedTest(CODE)


class PlainSlow:
    name, refines, cacheable = "plain-slow", False, False

    def generate(self, task):
        time.sleep(1.5)
        return GeneratedTest(CODE)
'''


def test_a_generation_out_of_time_fails_and_the_run_goes_on(tmp_path: Path) -> None:
    """--generation-timeout: an async generation is cut off, a plain one given up on (its
    generator's next calls go on in a new thread), and a plain generator's waits for its
    earlier calls do not count (4 calls of 1.5 s each, one at a time, all within 2 s)."""
    (tmp_path / "restbench_slow_gen.py").write_text(SLOW_GENERATORS)
    started = time.monotonic()
    done = restbench("run", "-s", MINI, "-g", ",".join(
        f"restbench_slow_gen:{name}" for name in ("Hangs", "PlainHangs", "PlainSlow")),
        "--generation-timeout", "2", "-o", tmp_path / "out", cwd=tmp_path, timeout=120)
    assert time.monotonic() - started < 90
    assert done.returncode == 1, done.stderr
    out_of_time = "no test within the 2 s a generation may take (--generation-timeout)"
    for failed in ("Hangs failed on MINI-01 (precise)", "Hangs failed on MINI-01 (vague)",
                   "PlainHangs failed on MINI-01 (precise)"):
        assert f"note: restbench_slow_gen:{failed}: {out_of_time}" in done.stderr, done.stderr
    assert done.stderr.count(out_of_time) == 3, done.stderr
    assert "3 of 12 generations made in this run failed" in done.stderr
    with sqlite3.connect(tmp_path / "out" / "results.sqlite3") as db:
        made = dict(db.execute("SELECT generator, count(*) FROM generations WHERE status = 'ok' "
                               "GROUP BY generator").fetchall())
    assert made == {f"restbench_slow_gen:{name}": count
                    for name, count in (("Hangs", 2), ("PlainHangs", 3), ("PlainSlow", 4))}

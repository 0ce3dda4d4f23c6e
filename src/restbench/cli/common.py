"""What every command shares: the consoles, one-line errors, progress bars, the `main`
group and the options used by several commands."""

from __future__ import annotations

import asyncio
import logging
import math
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from restbench.engine.events import Advanced, Event, Notice, PhaseStarted
from restbench.errors import RestbenchError
from restbench.execution.limits import LONGEST_TIMEOUT_S, MOST_WORKERS

if TYPE_CHECKING:
    from restbench.generators import GeneratorSpec

# Tables are wide; when output goes to a file or a pipe (a CI log), never squeeze them: a squeezed
# column ends in "…", also a number's. A terminal squeezes to its width.
UNLIMITED_WIDTH = 100_000
console = Console(width=None if Console().is_terminal else UNLIMITED_WIDTH)
# Off a terminal (a CI log, a pipe) a note, problem or error stays on its one line; rich would
# wrap it at 80 columns. A terminal wraps as it always did.
errors = Console(stderr=True, soft_wrap=not Console(stderr=True).is_terminal)


# The progress bars on screen, stopped before an error is printed: stopping redraws them, and the
# error should be the last line (on Ctrl-C, the bars were drawn again below it).
_shown_bars: list[Progress] = []


def _stop_bars() -> None:
    while _shown_bars:  # once each: a stop off a terminal prints a line
        _shown_bars.pop().stop()


def fail(message: str, code: int = 2) -> None:
    _stop_bars()
    errors.print(f"[red]error:[/] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
    sys.exit(code)


@contextmanager
def progress() -> Iterator[Callable[[Event], None]]:
    """A progress bar per phase (done/total, elapsed, ETA), fed by engine events."""
    bars = Progress(TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=errors, transient=False)
    tasks: dict[str, TaskID] = {}

    def handle(event: Event) -> None:
        if isinstance(event, PhaseStarted):
            if event.phase in tasks:
                bars.update(tasks[event.phase], total=event.total)
            else:
                if not tasks:
                    bars.start()
                    _shown_bars.append(bars)
                tasks[event.phase] = bars.add_task(event.phase, total=event.total)
        elif isinstance(event, Advanced):
            bars.advance(tasks[event.phase])
        elif isinstance(event, Notice):
            bars.console.print(f"[yellow]note:[/] {escape(event.message)}", highlight=False)

    # Started with the first phase: a display started before a bad input is found would end
    # with an empty line above its one-line error.
    try:
        yield handle
    finally:
        _stop_bars()


def print_notice(event: Event) -> None:
    """The notices of work that has no progress bar of its own (starting servers and workers)."""
    if isinstance(event, Notice):
        errors.print(f"[yellow]note:[/] {escape(event.message)}", highlight=False)


# What `restbench run` scores when no generator is named: the reference and the no-LLM baselines.
DEFAULT_GENERATORS = ("golden", "status-oracle", "schema-oracle", "schemathesis")


@contextmanager
def user_errors(interrupted: str) -> Iterator[None]:
    """Every problem of a bad input on its own line, exit 2; Ctrl-C says what was kept, exit 130."""
    try:
        yield
    except RestbenchError as exc:
        _stop_bars()
        for line in str(exc).splitlines():
            errors.print(f"[red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        fail(interrupted, code=130)


def split(values: tuple[str, ...]) -> list[str]:
    """Repeated and comma-separated values, each once, in the order given: `-m a,a` would
    otherwise score model a twice and count its generations and cost twice."""
    parts = (part.strip() for value in values for part in value.split(","))
    return list(dict.fromkeys(part for part in parts if part))


def generator_specs(names: list[str], args: tuple[str, ...]) -> list[GeneratorSpec]:
    from restbench.generators import GeneratorSpec

    per_generator: dict[str, dict[str, str]] = {name: {} for name in names}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep:
            raise RestbenchError(f"--generator-arg {arg!r}: expected KEY=VALUE or GEN.KEY=VALUE")
        target, dot, key = key.rpartition(".") if "." in key else ("", "", key)
        chosen = [target] if dot else names
        for name in chosen:
            if name not in per_generator:
                raise RestbenchError(f"--generator-arg {arg!r}: no generator '{name}' chosen")
            per_generator[name][key] = value
    return [GeneratorSpec(name, per_generator[name]) for name in names]


RESUMABLE = "interrupted; everything finished so far is saved, rerun the same command to resume"


def run_async(coroutine: Any, interrupted: str = RESUMABLE) -> Any:
    """Runs the command's coroutine; a user error is one line (exit 2), Ctrl-C (or SIGTERM)
    says `interrupted` (exit 130)."""
    try:
        return run_stoppable(coroutine)
    except RestbenchError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail(interrupted, code=130)


def run_stoppable(coroutine: Any) -> Any:
    """asyncio.run of the command's coroutine, which SIGTERM stops as Ctrl-C does: cancelled,
    it cleans up, then KeyboardInterrupt is raised."""
    global _terminated
    _terminated = False
    try:
        return asyncio.run(_as_main_task(coroutine))
    except asyncio.CancelledError:
        if not _terminated:
            raise
        raise KeyboardInterrupt from None


# The command's coroutine while it runs, for SIGTERM to cancel where SIGINT is ignored.
_main_task: asyncio.Task[Any] | None = None
_terminated = False


async def _as_main_task(coroutine: Any) -> Any:
    global _main_task
    _main_task = asyncio.current_task()
    try:
        return await coroutine
    finally:
        _main_task = None


_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click 8.2 and later


class _OneLineUsageErrors(click.Group):
    """click's usage errors (a bad option value, a missing argument) on one `error:` line, as
    restbench's own, instead of click's usage, hint and error lines."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("standalone_mode", True):
            return super().main(*args, **kwargs)
        try:
            return super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.Exit as exc:  # --help, --version
            sys.exit(exc.exit_code)
        except click.Abort:  # Ctrl-C or end of input at a prompt
            fail("aborted", code=1)
        except _NO_ARGS_IS_HELP as exc:  # `restbench` alone: the help, as click shows it
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            hint = f"'{exc.ctx.command_path} -h'" if exc.ctx is not None else "-h"
            message = " ".join(exc.format_message().split())
            for said, meant in _RANGE_WORDS:  # click's name of the type, not of the value
                message = message.replace(said, meant)
            fail(f"{message} ({hint} for help)", code=exc.exit_code)
        except click.ClickException as exc:
            fail(" ".join(exc.format_message().split()), code=exc.exit_code)
        sys.exit(0)


class FiniteFloat(click.FloatRange):
    """A number of at least `min`; `nan` and `inf`, which float() and click's ranges take, are
    refused (nan compares false with any bound: `--fail-below nan` turned the gate off)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


_RANGE_WORDS = (("is not a valid integer range", "is not a whole number"),
                ("is not a valid float range", "is not a number"))


@click.group(cls=_OneLineUsageErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Log what the harness does.")
@click.version_option(package_name="restbench")
def main(verbose: bool) -> None:
    """restbench: do generated API tests enforce the requirement they were written for?"""
    if verbose:
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s: %(message)s")
    else:
        logging.basicConfig(level=logging.WARNING, handlers=[_WarningLines()])
    signal.signal(signal.SIGTERM, _stop_as_on_ctrl_c)
    for chatty in ("httpcore", "hpack", "asyncio", "urllib3"):  # connection-level noise
        logging.getLogger(chatty).setLevel(logging.WARNING)


class _WarningLines(logging.Handler):
    """A logged warning as a `warning:` line through the console that draws the progress bars,
    so that it shows above them rather than under a bar that is drawn over it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:  # its one line, no traceback
                text += f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
            text = " ".join(text.split())
            errors.print(f"[yellow]warning:[/] {escape(text)}", highlight=False, soft_wrap=True)
        except Exception:  # noqa: BLE001 - logging must never end the command
            self.handleError(record)


def _stop_as_on_ctrl_c(signum: int, frame: object) -> None:
    """SIGTERM (a CI job's time limit, a batch scheduler, `kill`) ends a command as Ctrl-C does:
    what it made is saved, and its servers, workers and scratch folders go with it. The default
    action would end the process at once and leave them."""
    global _terminated
    if callable(signal.getsignal(signal.SIGINT)):  # Python's handler, or asyncio.run's
        signal.raise_signal(signal.SIGINT)
    elif _main_task is not None and not _main_task.done() and not _terminated:
        # SIGINT ignored (a shell's background job), so asyncio.run has no handler: do what
        # its handler does, cancel the command's task so that it cleans up, and wake the loop.
        # (A KeyboardInterrupt raised here would land in whatever the loop was running, and a
        # task hit by it may never finish: the command hung in its cleanup.)
        _terminated = True
        _main_task.cancel()
        _main_task.get_loop().call_soon_threadsafe(lambda: None)
    else:  # not in the event loop (or a second SIGTERM): as a second Ctrl-C does
        raise KeyboardInterrupt


workers_option = click.option("-j", "--workers", type=click.IntRange(min=1, max=MOST_WORKERS),
                              default=None,
                              help="Executions in parallel. Default: one more than the number "
                                   "of CPUs.")
llm_config_option = click.option(
    "--llm-config", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
    help="TOML file naming model endpoints and prices (default: $RESTBENCH_LLM_CONFIG, else "
         "./restbench-models.toml, else OPENAI_BASE_URL/OPENAI_API_KEY).")
timeout_option = click.option("--timeout", "timeout_s",
                              type=FiniteFloat(min=1, max=LONGEST_TIMEOUT_S), default=30.0,
                              show_default=True, help="Time limit of one test execution (s).")


def not_empty(option: str, what: str, left_out: str | None = None
              ) -> Callable[[click.Context, click.Parameter, tuple[str, ...]], tuple[str, ...]]:
    """A callback refusing a list option given only empty values: an empty -R (an unset shell
    variable, say) would select nothing, which means everything. `left_out` says what leaving
    the option out gives, when it is not every `what`."""

    def check(_ctx: click.Context, _param: click.Parameter,
              values: tuple[str, ...]) -> tuple[str, ...]:
        if values and not split(values):
            fail(f"{option} {', '.join(map(repr, values))}: names no {what} (it is empty); "
                 f"leave {option.split('/')[0]} out {left_out or f'to choose every {what}'}")
        return values

    return check


service_option = click.option(
    "-s", "--service", "services", multiple=True, callback=not_empty("-s/--service", "service"),
    help="Built-in service name or path to a service folder; repeat or comma-separate. "
         "Default: every built-in service.")
requirement_option = click.option(
    "-R", "--requirement", "requirements", multiple=True, metavar="ID[,ID...]",
    callback=not_empty("-R/--requirement", "requirement"),
    help="Only these requirements: ids or globs such as 'FS-1*'; repeat or comma-separate.")


def _check_database(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    from restbench.serving.databases import DatabaseChoice

    try:
        DatabaseChoice.parse(value)
    except RestbenchError as exc:
        fail(str(exc))
    return value


sandbox_option = click.option(
    "--no-sandbox", "no_sandbox", is_flag=True,
    help="Run generated tests without the sandbox (no namespaces): only for machines that "
         "cannot sandbox and tests you trust; a test can then read your files and API keys.")
database_option = click.option(
    "--db", "database", default="sqlite", show_default=True, metavar="sqlite|postgres|URL",
    callback=_check_database,
    help="Database of the services: sqlite; postgres (a throwaway PostgreSQL server the harness "
         "starts and removes); or postgresql://USER@HOST/DB, your server (a database per "
         "service server is created there and dropped).")



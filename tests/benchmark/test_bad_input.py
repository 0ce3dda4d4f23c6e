"""Bad benchmark data gives one line naming the file, the item and the problem; no traceback."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from restbench.benchmark import load_service
from restbench.benchmark.manifest import Storage
from tests.cli_helpers import restbench


def edit(service: Path, old: str, new: str) -> None:
    data = service / "requirements.yaml"
    text = data.read_text()
    assert text.count(old) == 1, old
    data.write_text(text.replace(old, new))


def one_line_error(result: object) -> str:
    stderr = result.stderr.strip()  # type: ignore[attr-defined]
    assert result.returncode == 2, stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr
    assert len(stderr.splitlines()) == 1, stderr
    return stderr


@pytest.mark.parametrize("command", ["validate", "run"])
def test_missing_field(mini_service: Path, command: str) -> None:
    edit(mini_service, "    vague: Counters can be read, unknown ones are reported missing.\n", "")
    message = one_line_error(restbench(command, "-s", mini_service))
    assert str(mini_service / "requirements.yaml") in message
    assert "requirement MINI-01" in message
    assert "missing field 'vague'" in message


def test_duplicate_requirement_id(mini_service: Path) -> None:
    edit(mini_service, "  - id: MINI-02\n", "  - id: MINI-01\n")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert "requirement MINI-01: duplicate id" in message
    assert "requirements.yaml" in message


def test_duplicate_mutant_id(mini_service: Path) -> None:
    edit(mini_service, "      - id: MINI-02-M2\n", "      - id: MINI-02-M1\n")
    message = one_line_error(restbench("run", "-s", mini_service))
    assert "mutant MINI-02-M1: duplicate id" in message


@pytest.mark.parametrize(("find", "problem"), [
    ('"status_code=404"', "does not occur"),
    ('"app.state.counters[name]"', "occurs 2 times"),
])
def test_mutant_find_text_must_occur_exactly_once(mini_service: Path, find: str,
                                                  problem: str) -> None:
    if problem == "does not occur":
        edit(mini_service, 'find: "status_code=404"', 'find: "status_code=418"')
    else:
        edit(mini_service, 'find: "status_code=404"', f"find: {find}")
    message = one_line_error(restbench("run", "-s", mini_service))
    assert "requirements.yaml" in message
    assert "mutant MINI-01-M1" in message
    assert problem in message
    assert "app/main.py" in message


def test_validate_reports_an_unappliable_mutant_and_keeps_checking(mini_service: Path) -> None:
    edit(mini_service, 'find: "status_code=404"', 'find: "status_code=418"')
    result = restbench("validate", "-s", mini_service)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "MINI-01-M1: find text does not occur" in result.stderr  # its problem line, whole
    assert "mini: 2 requirements, 3 mutants, 1 benign variant: 1 problem (" in result.stdout


def test_golden_test_path_that_does_not_exist(mini_service: Path) -> None:
    edit(mini_service, "golden: golden/test_MINI-02.py", "golden: golden/test_MINI-99.py")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert "requirement MINI-02: golden test golden/test_MINI-99.py does not exist" in message
    # Before: taken, and validate ran /etc/passwd as the requirement's golden test
    edit(mini_service, "golden: golden/test_MINI-99.py", "golden: ../../../../../../etc/passwd")
    message = one_line_error(restbench("list", "-s", mini_service))
    assert message.endswith("requirement MINI-02: golden test ../../../../../../etc/passwd is "
                            "outside the service folder")


def test_a_golden_test_that_is_a_folder_or_not_a_pytest_file(mini_service: Path) -> None:
    """Before: a folder "did not exist", and a JavaScript golden test was handed to pytest
    ("collection error: SyntaxError: invalid syntax", naming no file)."""
    edit(mini_service, "golden: golden/test_MINI-02.py", "golden: golden")
    message = one_line_error(restbench("list", "-s", mini_service))
    assert message.endswith("requirement MINI-02: golden test golden is a folder, not a file")
    (mini_service / "golden" / "test_MINI-02.test.js").write_text("test('x', () => {});\n")
    edit(mini_service, "golden: golden\n", "golden: golden/test_MINI-02.test.js\n")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert message.endswith("requirement MINI-02: golden test golden/test_MINI-02.test.js is not "
                            "a pytest file (.py)")


@pytest.mark.parametrize(("old", "new", "item"), [
    ("service: mini\n", "service: ../../../tmp/elsewhere\n",
     "field 'service': '../../../tmp/elsewhere'"),
    ("service: mini\n", "service: Book Marks!\n", "field 'service': 'Book Marks!'"),
    ("  - id: MINI-02\n", "  - id: ../MINI-02\n", "requirement ../MINI-02: field 'id'"),
    ("      - id: MINI-02-M2\n", "      - id: MINI-02-M2/x\n", "field 'id': 'MINI-02-M2/x'"),
])
def test_a_name_that_is_not_plain_is_refused(mini_service: Path, old: str, new: str,
                                             item: str) -> None:
    """Before: a service named '../../../x' had its servers' folders and its build cache made
    outside restbench's own folders (and left there)."""
    edit(mini_service, old, new)
    message = one_line_error(restbench("list", "-s", mini_service))
    assert item in message and "is not a plain name" in message, message


def test_an_operation_that_is_not_method_and_path_is_refused_by_list(mini_service: Path) -> None:
    """Before: list took it; validate and run then said it was not in the OpenAPI document."""
    edit(mini_service, 'operations: ["GET /counters/{name}"]', 'operations: ["FETCH counters"]')
    message = one_line_error(restbench("list", "-s", mini_service))
    assert message.endswith("requirement MINI-01: field 'operations[0]': 'FETCH counters' is not "
                            "'METHOD /path' as the OpenAPI document writes the path (e.g. "
                            "'GET /notes/{id}')"), message


def test_a_flag_written_as_text_is_refused(mini_service: Path) -> None:
    """Before: "no" (quoted) was taken as false, and "yes" as true."""
    text = (mini_service / "requirements.yaml").read_text()
    first = text.index("vague_basis: ")
    flag = text[first:text.index("\n", first)]
    (mini_service / "requirements.yaml").write_text(
        text[:first] + 'vague_basis: "no"' + text[first + len(flag):])
    message = one_line_error(restbench("list", "-s", mini_service))
    assert message.endswith("field 'vague_basis': Input should be a valid boolean"), message


def test_not_yaml(mini_service: Path) -> None:
    (mini_service / "requirements.yaml").write_text("service: [mini\n")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert "not valid YAML at line 2" in message


def test_not_utf8(mini_service: Path) -> None:
    (mini_service / "requirements.yaml").write_bytes(b"service: mini\ntitle: caf\xe9\n")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert "requirements.yaml: not UTF-8 text (byte 24)" in message


def test_unknown_service_and_generator(mini_service: Path) -> None:
    assert "unknown service 'nope'" in one_line_error(restbench("validate", "-s", "nope"))
    message = one_line_error(restbench("run", "-s", mini_service, "-g", "nope"))
    assert "unknown generator 'nope'" in message
    message = one_line_error(restbench("run", "-s", mini_service, "-g", "files",
                                       "-a", "dir=/does/not/exist"))
    assert "/does/not/exist is not a folder" in message


RUN_AND_SAY_WHAT_WAS_IMPORTED = """
import sys
from restbench.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    heavy = ("restbench.engine.run", "restbench.execution.executor", "restbench.serving.pool")
    print(exc.code, [name for name in heavy if name in sys.modules], file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["-s", "nope"], ["-g", "nope"], ["-R", "NOPE-*"],
                                  ["-g", "single-step"]])
def test_run_finds_a_bad_input_before_it_imports_the_engine(mini_service: Path,
                                                            args: list[str]) -> None:
    """The engine's imports cost ~0.55 s of CPU, which an unknown name should not wait for."""
    ran = subprocess.run([sys.executable, "-c", RUN_AND_SAY_WHAT_WAS_IMPORTED, "run",
                          *(["-s", str(mini_service)] if args[0] != "-s" else []), *args],
                         capture_output=True, text=True, timeout=60, check=False)
    error, said = ran.stderr.strip().splitlines()
    assert error.startswith("error: "), ran.stderr
    assert said == "2 []", ran.stderr


@pytest.mark.parametrize("command", ["validate", "run"])
def test_two_services_of_one_name_are_refused(mini_service: Path, tmp_path: Path,
                                              command: str) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(mini_service, twin)
    message = one_line_error(restbench(command, "-s", mini_service, "-s", twin))
    assert str(twin / "requirements.yaml") in message
    assert f"service 'mini' has the name of {mini_service}" in message


def test_a_mutant_whose_id_is_not_its_requirements(mini_service: Path) -> None:
    edit(mini_service, "      - id: MINI-01-M1\n", "      - id: MINI-02-M9\n")
    message = one_line_error(restbench("run", "-s", mini_service))
    assert "requirement MINI-01: mutant MINI-02-M9: its id must start with MINI-01-" in message


def app_edit(service: Path, old: str, new: str) -> None:
    main = service / "app" / "main.py"
    text = main.read_text()
    assert text.count(old) == 1, old
    main.write_text(text.replace(old, new))


def test_an_empty_openapi_document_is_refused(mini_service: Path) -> None:
    app_edit(mini_service, 'app = FastAPI(title="Mini counter")',
             'app = FastAPI(title="Mini counter")\n    app.openapi = lambda: {}')
    message = one_line_error(restbench("run", "-s", mini_service, "-g", "golden"))
    assert "service mini: GET /openapi.json has no operations" in message


def test_an_openapi_document_that_never_comes(mini_service: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESTBENCH_TEST_OPENAPI_TIMEOUT_S", "1")
    app_edit(mini_service, 'app = FastAPI(title="Mini counter")',
             'app = FastAPI(title="Mini counter", openapi_url=None)\n\n'
             '    @app.get("/openapi.json", include_in_schema=False)\n'
             '    def never() -> None:\n'
             '        import time\n'
             '        time.sleep(30)\n')
    message = one_line_error(restbench("run", "-s", mini_service, "-g", "golden"))
    assert "service mini: GET /openapi.json gave no answer within 1 s" in message


@pytest.mark.parametrize(("old", "new", "error", "line"), [
    ('from fastapi import FastAPI, HTTPException',
     'from fastapi import FastAPI, HTTPException\nimport counters_helper_that_is_missing',
     "ModuleNotFoundError: No module named 'counters_helper_that_is_missing'", 4),
    ('    app.state.counters = {"a": 1}\n\n    @app.get',
     '    app.state.counters = {"a": 1}\n    raise RuntimeError("no database")\n\n    @app.get',
     "RuntimeError: no database", 9),
    # uvicorn exits when the app's lifespan startup raises: before, "exited before it started"
    ('    app = FastAPI(title="Mini counter")',
     ('    import contextlib\n\n'
      '    @contextlib.asynccontextmanager\n'
      '    async def lifespan(app: FastAPI):\n'
      '        raise RuntimeError("no broker")\n'
      '        yield\n\n'
      '    app = FastAPI(title="Mini counter", lifespan=lifespan)'),
     "the app's startup (its lifespan) failed", 11),
])
def test_a_service_that_cannot_start_names_the_users_file_and_line(
        mini_service: Path, old: str, new: str, error: str, line: int) -> None:
    """Before: the service's traceback, naming a deleted temporary copy."""
    app_edit(mini_service, old, new)
    message = one_line_error(restbench("run", "-s", mini_service, "-g", "golden"))
    assert f"mini original did not start: {error} at {mini_service / 'app' / 'main.py'}:{line}" \
        in message
    assert "/tmp/restbench-" not in message.replace(str(mini_service), "")


def test_golden_test_not_utf8(mini_service: Path) -> None:
    (mini_service / "golden" / "test_MINI-01.py").write_bytes(b"def test_x():\n    '\xff'\n")
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert "golden/test_MINI-01.py: not UTF-8 text (byte 19)" in message


@pytest.mark.parametrize("command", ["validate", "run", "serve"])
def test_a_memory_folder_that_is_not_one(mini_service: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    """$RESTBENCH_MEMORY_DIR is where restbench keeps its scratch folders: a user's typo is named,
    not silently replaced by /dev/shm or the disk."""
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    for wrong in (tmp_path / "missing", not_a_folder):
        monkeypatch.setenv("RESTBENCH_MEMORY_DIR", str(wrong))
        target = ["todo", "--port", "0"] if command == "serve" else ["-s", mini_service]
        message = one_line_error(restbench(command, *target, "-o", tmp_path / "out")
                                 if command == "run" else restbench(command, *target))
        assert f"RESTBENCH_MEMORY_DIR={wrong}: not a folder restbench may write in" in message
        assert not (tmp_path / "out").exists()  # the run stopped before it made its store


def test_a_built_in_name_means_the_built_in_even_beside_a_folder_of_that_name(
        mini_service: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from restbench.benchmark import builtin_service_names, resolve_services

    shutil.copytree(mini_service, tmp_path / "todo")  # a user's own service, in a folder "todo"
    monkeypatch.chdir(tmp_path)
    assert "todo" in builtin_service_names()
    assert resolve_services(["todo"])[0].name == "todo"
    assert resolve_services(["todo"])[0].root != (tmp_path / "todo").resolve()
    assert resolve_services(["./todo"])[0].name == "mini"
    assert resolve_services([str(tmp_path / "todo")])[0].name == "mini"
    shutil.rmtree(tmp_path / "todo")
    assert resolve_services(["todo/"])[0].name == "todo"  # no such folder: the built-in


def _truncated_store(folder: Path) -> None:
    from restbench.store import ResultStore

    folder.mkdir()
    store = ResultStore(folder / "results.sqlite3")
    for number in range(50):  # several pages, so that half the file lacks some
        store.save_llm_call(f"key-{number}", "model", {"text": "x" * 500})
    store.close()  # the last connection folds the WAL file into the store
    data = (folder / "results.sqlite3").read_bytes()
    (folder / "results.sqlite3").write_bytes(data[:len(data) // 2])


UNUSABLE_STORES = {
    "under-a-file": "cannot make its folder: {tmp}/a-file is a file, not a folder",
    "a-folder": "results.sqlite3: is a folder, not a result store",
    "garbage": "results.sqlite3: not a usable result store (file is not a database)",
    "truncated": "results.sqlite3: not a usable result store (database disk image is malformed)",
    # Before: a traceback at the first result saved (table generations has 1 columns but 19
    # values were supplied)
    "another-shape": "results.sqlite3: not a restbench result store (its table 'generations' "
                     "has the columns x)",
    # Before: the store's tables were added to another program's database, without a word
    "another-program": "results.sqlite3: not a restbench result store (it holds a table "
                       "'customers' that a result store has not)",
}


@pytest.mark.parametrize("case", UNUSABLE_STORES)
def test_a_results_folder_that_cannot_hold_the_store(mini_service: Path, tmp_path: Path,
                                                     case: str) -> None:
    """Before: a traceback (NotADirectoryError, sqlite3.OperationalError or DatabaseError)."""
    output = tmp_path / "out"
    if case == "under-a-file":
        (tmp_path / "a-file").write_text("")
        output = tmp_path / "a-file" / "out"
    elif case == "a-folder":
        (output / "results.sqlite3").mkdir(parents=True)
    elif case == "garbage":
        output.mkdir()
        (output / "results.sqlite3").write_bytes(bytes(range(256)) * 8)
    elif case.startswith("another"):
        output.mkdir()
        with contextlib.closing(sqlite3.connect(output / "results.sqlite3")) as db:
            db.execute("CREATE TABLE generations (x)" if case == "another-shape" else
                       "CREATE TABLE customers (name, email)")
            db.commit()
    else:
        _truncated_store(output)
    message = one_line_error(restbench("run", "-s", mini_service, "-g", "golden", "-o", output))
    assert UNUSABLE_STORES[case].format(tmp=tmp_path) in message
    assert str(output / "results.sqlite3") in message


def test_a_folder_where_the_scores_go_is_found_before_the_run(mini_service: Path,
                                                              tmp_path: Path) -> None:
    """Before: the whole run, then a traceback (IsADirectoryError) at writing scores.json."""
    (tmp_path / "out" / "scores.json").mkdir(parents=True)
    message = one_line_error(restbench("run", "-s", mini_service, "-g", "golden",
                                       "-o", tmp_path / "out"))
    assert message == (f"error: {tmp_path / 'out' / 'scores.json'}: is a folder, where the "
                       "run's scores go: move it away, or choose another --output-dir")
    assert not (tmp_path / "out" / "results.sqlite3").exists()  # nothing ran


def test_serve_names_where_the_app_failed_as_run_does(mini_service: Path) -> None:
    """Before: serve printed the traceback through the temporary copy it ran."""
    main = mini_service / "app" / "main.py"
    main.write_text(main.read_text() + "\nraise RuntimeError('half written')\n")
    line = len(main.read_text().splitlines())
    message = one_line_error(restbench("serve", mini_service, "--port", "0"))
    assert message == (f"error: mini original did not start: RuntimeError: half written at "
                       f"{main}:{line}")


@pytest.mark.parametrize("command", ["list", "validate", "run", "serve"])
def test_a_python_service_without_its_app_folder(mini_service: Path, command: str) -> None:
    """Before: `list` showed it, and the other commands gave a traceback (FileNotFoundError)."""
    (mini_service / "app" / "main.py").unlink()
    target = [mini_service] if command == "serve" else ["-s", mini_service]
    message = one_line_error(restbench(command, *target))
    assert f"{mini_service}: app/main.py does not exist" in message
    shutil.rmtree(mini_service / "app")
    message = one_line_error(restbench(command, *target))
    assert f"{mini_service}: folder app/ does not exist" in message


@pytest.mark.parametrize("port", ["70000", "-5"])
def test_a_port_out_of_range(port: str) -> None:
    """Before: 70000 said it served on :70000 while it listened on 4464 (70000 - 65536), and -5
    failed inside uvicorn with a cryptic socket error."""
    message = one_line_error(restbench("serve", "todo", "--port", port, timeout=60))
    assert f"Invalid value for '--port': {port} is not in the range 0<=x<=65535" in message


@pytest.mark.parametrize("service", ["todo", "ledger"])
def test_serve_on_a_port_in_use(service: str, tmp_path: Path) -> None:
    """Before: todo printed uvicorn's `ERROR: [Errno 98] ...` and exited 3; ledger started its
    server, then failed with a traceback (OSError), exit 1."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        message = one_line_error(restbench("serve", service, "--port", port, timeout=300,
                                           env={"TMPDIR": str(tmp_path)}))
    assert message.startswith(f"error: --host 127.0.0.1 --port {port}: cannot listen there: "
                              "Address already in use"), message
    assert list(tmp_path.iterdir()) == []  # no copy of the service, no server's folder


@pytest.mark.parametrize(("host", "reason"), [("nohost.invalid", "Name or service not known"),
                                              ("192.0.2.1", "Cannot assign requested address")])
def test_serve_on_a_host_that_is_not_this_machine(host: str, reason: str, tmp_path: Path) -> None:
    """Before: uvicorn's `ERROR: [Errno -2] Name or service not known`, the host not named,
    exit 3."""
    message = one_line_error(restbench("serve", "todo", "--host", host, "--port", "0",
                                       timeout=60, env={"TMPDIR": str(tmp_path)}))
    assert message.startswith(f"error: --host {host} --port 0: cannot listen there: {reason}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "problem"), [
    (["run", "--bogus"], "error: No such option '--bogus'"),
    (["serve"], "error: Missing argument 'SERVICE'. ("),
    (["run", "-V", "nope"], "error: Invalid value for '-V' / '--variant': 'nope' is not one of"),
    (["nosuchcommand"], "error: No such command 'nosuchcommand'. ("),
    # before: "'abc' is not a valid integer range", click's name for the option's type
    (["validate", "--repeat", "abc"],
     "error: Invalid value for '--repeat': 'abc' is not a whole number. ("),
    (["run", "--timeout", "x"], "error: Invalid value for '--timeout': 'x' is not a number. ("),
    # before: a traceback (NOT NULL constraint failed: executions.duration_s)
    (["run", "--timeout", "nan"],
     "error: Invalid value for '--timeout': 'nan' is not a finite number ("),
    # before: accepted, and the gate never failed (nan compares false)
    (["compare", "a", "b", "--fail-below", "nan"],
     "error: Invalid value for '--fail-below': 'nan' is not a finite number ("),
    # before: accepted, and every execution became an error ("the worker's channel: closed")
    (["run", "--timeout", "1e10"], ("error: Invalid value for '--timeout': 10000000000.0 is not "
                                   "in the range 1<=x<=86400.0. (")),
    # before: accepted; -j 100000 was still starting workers after 5 minutes
    (["run", "-j", "100000"], ("error: Invalid value for '-j' / '--workers': 100000 is not in "
                              "the range 1<=x<=1024. (")),
], ids=["option", "argument", "choice", "command", "whole-number", "number", "nan-timeout",
        "nan-gate", "huge-timeout", "huge-workers"])
def test_a_usage_error_is_one_line(args: list[str], problem: str) -> None:
    """Before: click's four lines (usage, hint, an empty line, `Error: ...`)."""
    message = one_line_error(restbench(*args, timeout=60))
    assert message.startswith(problem), message
    assert message.endswith(f"{args[0] if args[0] == 'serve' else ''} -h' for help)"), message


@pytest.mark.parametrize(("args", "problem"), [
    # Before: the default generators ran, and every service was listed, as for -R before
    (["run", "-g", " , "], ("-g/--generator ' , ': names no generator (it is empty); leave -g "
                           "out for the default generators")),
    (["list", "-s", ""], ("-s/--service '': names no service (it is empty); leave -s out to "
                         "choose every service")),
])
def test_an_empty_generator_or_service_is_an_error_not_the_default(args: list[str],
                                                                   problem: str) -> None:
    assert one_line_error(restbench(*args, timeout=60)) == f"error: {problem}"


def test_help_and_version_still_exit_0() -> None:
    for args in (["-h"], ["run", "-h"], ["--version"]):
        done = restbench(*args, timeout=60)
        assert done.returncode == 0, (args, done.stderr)
        assert done.stdout.strip() and not done.stderr, args


def test_notes_and_problems_stay_on_one_line_off_a_terminal(mini_service: Path) -> None:
    """Before: rich wrapped them at 80 columns when stderr was a file or a pipe (a CI log)."""
    edit(mini_service, 'replace: "status_code=400"', 'replace: "status_code=400)("')
    done = restbench("validate", "-s", mini_service, "-R", "MINI-01", "--no-sandbox",
                     env={"COLUMNS": "80"})
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert ("note: tests run without the sandbox (--no-sandbox): a test can read your files "
            "and environment, and a JavaScript or Postman test reaches the service only through "
            "BASE_URL, not a hard-coded localhost:8000") in lines
    problem = next(line for line in lines if line.startswith("problem:"))
    assert problem.endswith("(with the edit of mutant MINI-01-M1 applied)"), problem
    assert len(problem) > 80


@pytest.mark.parametrize(("old", "new", "problem"), [
    ("benign:\n", "databases: [sqlite, mysql]\nbenign:\n",
     "field 'databases[1]': bad value 'mysql' (expected 'sqlite' or 'postgresql')"),
    ('operations: ["GET /counters/{name}"]', 'operations: ["GET /counters/{name}", [1]]',
     "requirement MINI-01: field 'operations[1]': Input should be a valid string"),
    ("seed:\n  path: {name: a}", "seed:\n  path: {name: [a]}",
     "field 'seed.path.name': Input should be a valid string"),
    ('        find: "status_code=404"\n', "",
     "mutant MINI-01-M1: needs 'find' and 'replace' (or a unified 'diff')"),
], ids=["list-entry", "entry-in-a-requirement", "nested-mapping", "the-mutant-itself"])
def test_a_bad_value_is_named_by_its_full_path(mini_service: Path, old: str, new: str,
                                               problem: str) -> None:
    """Before: `field '1': bad value 'mysql'`, `field 'str'`, `requirement MINI-01: field
    '0': Value error, ...`: the enclosing list or mapping, or the mutant, went unnamed."""
    edit(mini_service, old, new)
    message = one_line_error(restbench("validate", "-s", mini_service))
    assert message == f"error: {mini_service / 'requirements.yaml'}: {problem}"


def test_postgres_and_postgresql_name_the_same_database_in_both_files(mini_service: Path) -> None:
    """`--db postgres` and service.toml say postgres, requirements.yaml said postgresql: each
    file takes either name."""
    edit(mini_service, "benign:\n", "databases: [sqlite, postgres]\nbenign:\n")
    assert [d.value for d in load_service(mini_service).data.databases] == ["sqlite", "postgresql"]
    assert Storage(databases=["postgresql"]).databases == ["postgres"]


def test_a_name_given_twice_is_scored_once(mini_service: Path, tmp_path: Path) -> None:
    """Before: `-g golden,golden` scored golden twice, doubling its generations (and, for a
    model, its cost and tokens) in the totals."""
    done = restbench("run", "-s", mini_service, "-g", "golden,golden", "-g", "golden",
                     "-V", "precise", "-V", "precise", "-o", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    requirements = len(load_service(mini_service).requirements)
    assert f"{requirements} generations made, 0 reused" in done.stdout, done.stdout


def test_a_table_off_a_terminal_is_never_squeezed(tmp_path: Path) -> None:
    """Before: off a terminal the console was 200 columns wide, and a wider table (refine's,
    with a model) ended its columns in "…", numbers too."""
    script = ("from rich.table import Table\n"
              "from restbench.cli.common import console\n"
              "table = Table()\n"
              "for n in range(8):\n"
              "    table.add_column(f'column {n} ' + 'h' * 30, no_wrap=True)\n"
              "table.add_row(*['100.0%' + '9' * 30] * 8)\n"
              "console.print(table)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, cwd=tmp_path, check=True)
    assert "…" not in done.stdout
    assert done.stdout.count("100.0%" + "9" * 30) == 8
    assert "column 7 " + "h" * 30 in done.stdout


def test_an_operation_the_openapi_document_lacks_stops_the_run_and_is_a_validate_problem(
        mini_service: Path, tmp_path: Path) -> None:
    """Before: list and validate passed it, and run failed each baseline's generation of that
    requirement (exit 1, "a rerun tries them again"), lowering its scores. (list reads no
    document: it starts no server.)"""
    edit(mini_service, 'operations: ["GET /counters/{name}"]', 'operations: ["GET /counter/{name}"]')
    data = mini_service / "requirements.yaml"
    result = restbench("run", "-s", mini_service, "-o", tmp_path / "out")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {data}: requirement MINI-01: operation 'GET /counter/{{name}}' is not in the "
        "service's OpenAPI document")
    assert "failed on" not in result.stderr
    validated = restbench("validate", "-s", mini_service)
    assert validated.returncode == 1, validated.stderr
    assert (f"problem: MINI-01: operation 'GET /counter/{{name}}' is not in the service's "
            f"OpenAPI document ({data})") in validated.stderr.splitlines()
    assert "mini: 2 requirements, 3 mutants, 1 benign variant: 1 problem" in validated.stdout
    # on its requirement's row (before: the row said "sound")
    row = next(line for line in validated.stdout.splitlines() if "MINI-01" in line)
    assert "operation 'GET /counter/{name}' is not in" in row and "sound" not in row
    main = mini_service / "app" / "main.py"
    main.write_text(main.read_text().replace("FastAPI(", "FastAPI(openapi_url=None, ", 1))
    no_document = restbench("validate", "-s", mini_service)
    assert no_document.returncode == 1, no_document.stderr
    assert "problem: service mini: GET /openapi.json answered 404" in \
        no_document.stderr.splitlines()


def test_list_reports_the_edits_that_do_not_apply(mini_service: Path) -> None:
    """Before: only validate found them; the guide says list reports mistakes."""
    edit(mini_service, 'replace: "status_code=400"', 'replace: "status_code=404"')
    result = restbench("list", "-s", mini_service)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("problem: ") and "replace text equals find text" in lines[0]
    assert lines[-1] == "error: 1 mutant or benign variant whose edit does not apply (above)"
    assert "mini" in result.stdout  # the table is still shown


def test_an_auth_block_the_baselines_cannot_use_is_said_and_a_missing_login_stops_the_run(
        mini_service: Path, tmp_path: Path) -> None:
    """Before: with no operation declaring `security`, the baselines never sent the token and
    scored valid 0% on every requirement that needs a login, without a word; a login operation
    the document lacks failed every baseline's generation."""
    login = ("auth:\n  operation: POST /counters/{name}/increment\n  body: {}\n"
             "  token: value\nseed:")
    edit(mini_service, "seed:", login)
    warned = restbench("run", "-s", mini_service, "-g", "golden", "-V", "precise",
                       "-o", tmp_path / "out")
    assert warned.returncode == 0, warned.stderr
    assert (f"{mini_service / 'requirements.yaml'}: auth: no operation of the OpenAPI document "
            "declares `security`, so the baselines never send the login's token") in \
        " ".join((warned.stdout + warned.stderr).split())
    edit(mini_service, "POST /counters/{name}/increment\n  body", "POST /login\n  body")
    stopped = restbench("run", "-s", mini_service, "-g", "golden", "-o", tmp_path / "again")
    assert one_line_error(stopped) == (
        f"error: {mini_service / 'requirements.yaml'}: auth.operation: 'POST /login' is not "
        "in the service's OpenAPI document")

"""The shared model client against a real HTTP server on loopback that replays scripted answers."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from restbench.errors import DataError
from restbench.llm import (
    ChatClient,
    LLMError,
    ModelConfig,
    ModelSettings,
    NoCodeError,
    PriceTable,
    Replay,
    check_credentials,
    extract_python,
    replay,
    resolve_model,
)
from restbench.llm.client import ANSWER_LIMIT_BYTES
from restbench.llm.fake import FakeLLMServer, Reply
from restbench.store import ResultStore
from tests.cli_helpers import restbench

HELLO = [{"role": "user", "content": "hello"}]
MINI = Path(__file__).parents[1] / "fixtures" / "mini"


def config(fake: FakeLLMServer, **overrides: object) -> ModelConfig:
    values = {"max_retries": 3, "retry_base_s": 0.01, "timeout_s": 5.0, **overrides}
    return ModelConfig("gpt-5-mini", "gpt-5-mini", fake.base_url, "TEST_LLM_KEY",
                       **values)  # type: ignore[arg-type]


def complete(cfg: ModelConfig, **kwargs: object) -> object:
    async def go() -> object:
        async with ChatClient(cfg, **kwargs) as client:  # type: ignore[arg-type]
            return await client.complete(HELLO)
    return asyncio.run(go())


def test_retries_rate_limits_server_errors_malformed_and_slow_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test-123")
    script = [Reply(status=429), Reply(status=500), Reply(body="{not json"),
              Reply(content="late", delay_s=3.0), "on time"]
    with FakeLLMServer(script) as fake:
        result = complete(config(fake, timeout_s=1.0, max_retries=4))  # roomy on a busy machine
    assert result.content == "on time"  # type: ignore[attr-defined]
    assert len(fake.requests) == 5
    assert all(h["authorization"] == "Bearer sk-test-123" for h in fake.headers)
    assert fake.requests[0]["model"] == "gpt-5-mini" and fake.requests[0]["messages"] == HELLO


def test_an_endpoint_that_keeps_failing_gives_one_line_error() -> None:
    with FakeLLMServer([Reply(status=503)] * 3) as fake, pytest.raises(LLMError) as error:
        complete(config(fake, max_retries=2))
    message = str(error.value)
    assert "HTTP 503" in message and "gave up after 3 attempts" in message
    assert "\n" not in message


def test_a_bad_request_is_not_retried() -> None:
    with FakeLLMServer([Reply(status=401, content="invalid api key"), "never"]) as fake, \
            pytest.raises(LLMError, match="HTTP 401: invalid api key"):
        complete(config(fake))
    assert len(fake.requests) == 1


def test_cost_arithmetic_from_the_price_table() -> None:
    prices = PriceTable.default()
    # gpt-5-mini: 0.25 USD per million input tokens, 2.00 per million output tokens
    assert prices.cost("gpt-5-mini", 1000, 500) == pytest.approx(0.00025 + 0.001)
    assert prices.cost("openai/GPT-5-mini-2025-08-07", 2_000_000, 0) == pytest.approx(0.5)
    assert prices.cost("claude-sonnet-4-5", 1_000_000, 1_000_000) == pytest.approx(18.0)
    assert prices.cost("my-local-llama", 10**6, 10**6) == 0.0
    with FakeLLMServer([Reply(content="x", usage=(1200, 300))]) as fake:
        result = complete(config(fake))
    assert result.usage.input_tokens == 1200  # type: ignore[attr-defined]
    assert result.cost_usd == pytest.approx(1200 * 0.25e-6 + 300 * 2e-6)  # type: ignore[attr-defined]


def answer_with_usage(usage: object) -> Reply:
    body: dict[str, object] = {"choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "x"}}]}
    if usage != "absent":
        body["usage"] = usage
    return Reply(body=json.dumps(body))


@pytest.mark.parametrize(("usage", "problem"), [
    ({"prompt_tokens": -1000, "completion_tokens": -500},
     "prompt_tokens -1000, completion_tokens -500"),
    ({"prompt_tokens": "abc", "completion_tokens": 500}, "prompt_tokens 'abc'"),
    ("absent", "no usage in the answer"),
    ("abc", "usage is 'abc'"),
])
def test_token_counts_that_are_not_counts_are_not_believed_and_the_user_is_told_once(
        usage: object, problem: str, caplog: pytest.LogCaptureFixture) -> None:
    """Before: negative counts gave a negative cost, a missing or text usage a silent $0."""
    with FakeLLMServer([answer_with_usage(usage)] * 2) as fake:
        cfg = config(fake)  # a port of its own: told afresh
        with caplog.at_level(logging.WARNING, logger="restbench.llm.client"):
            results = [complete(cfg), complete(cfg)]
    for result in results:
        assert result.cost_usd >= 0 and min(  # type: ignore[attr-defined]
            result.usage.input_tokens, result.usage.output_tokens) >= 0  # type: ignore[attr-defined]
    if usage == {"prompt_tokens": "abc", "completion_tokens": 500}:
        assert results[0].usage.output_tokens == 500  # type: ignore[attr-defined]
    told = [r.getMessage() for r in caplog.records if "token usage" in r.getMessage()]
    assert told == [(f"model '{cfg.name}' at {fake.base_url}: the endpoint reported no valid "
                     f"token usage ({problem}); its calls count as 0 tokens and $0")]


def test_identical_requests_are_answered_from_the_store(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results.sqlite3")
    with FakeLLMServer(["first answer", "second answer"]) as fake:
        first = complete(config(fake), cache=store)
        again = complete(config(fake), cache=store)
        fresh = complete(config(fake), cache=store, read_cache=False)
    assert (first.content, first.cached) == ("first answer", False)  # type: ignore[attr-defined]
    assert (again.content, again.cached) == ("first answer", True)  # type: ignore[attr-defined]
    assert fresh.content == "second answer"  # type: ignore[attr-defined]
    assert len(fake.requests) == 2


def test_a_replayed_task_gets_its_answers_in_order_whatever_its_tool_messages_hold(
        tmp_path: Path) -> None:
    """A task that sets `replay` (an agent-eval case) asks the same question twice and gets two
    answers, and a second run of the task gets them again in the same order, although its tool
    messages (the service's answers: new tokens) differ. A different user message does not."""
    store = ResultStore(tmp_path / "results.sqlite3")

    def conversation(token: str, user: str = "hello") -> list[dict[str, object]]:
        return [{"role": "user", "content": user},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "login", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": f'{{"token": "{token}"}}'}]

    def task(fake: FakeLLMServer, scope: str, token: str, user: str = "hello") -> list[object]:
        async def go() -> list[object]:
            replay.set(Replay(scope))
            async with ChatClient(config(fake), cache=store) as client:
                return [await client.complete(conversation(token, user)) for _ in range(2)]
        return asyncio.run(go())

    with FakeLLMServer([f"answer {n}" for n in range(1, 7)]) as fake:
        first = task(fake, "case a", token="t1")
        again = task(fake, "case a", token="t2")
        other_case = task(fake, "case b", token="t1")
        other_question = task(fake, "case a", token="t1", user="bye")
    assert [(r.content, r.cached) for r in first] == [  # type: ignore[attr-defined]
        ("answer 1", False), ("answer 2", False)]
    assert [(r.content, r.cached) for r in again] == [  # type: ignore[attr-defined]
        ("answer 1", True), ("answer 2", True)]
    assert [r.content for r in other_case] == ["answer 3", "answer 4"]  # type: ignore[attr-defined]
    assert [r.content for r in other_question] == [  # type: ignore[attr-defined]
        "answer 5", "answer 6"]
    assert len(fake.requests) == 6


def test_config_file_names_endpoints_without_holding_keys(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[defaults]\nbase_url = "http://127.0.0.1:9/v1"\nmax_concurrency = 2\n'
                    '[models.local]\nmodel = "meta-llama/Llama-3.1-8B-Instruct"\n'
                    'api_key_env = ""\nprice = "llama-3.1-8b"\n'
                    '[prices.house-model]\ninput = 1\noutput = 2\n')
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-stored")
    local = resolve_model("local", path)
    assert (local.model, local.base_url, local.api_key_env, local.max_concurrency) == (
        "meta-llama/Llama-3.1-8B-Instruct", "http://127.0.0.1:9/v1", None, 2)
    # without [models], every name goes to [defaults]' endpoint
    path.write_text('[defaults]\nbase_url = "http://127.0.0.1:9/v1"\n')
    other = resolve_model("gpt-5-nano", path)
    assert other.api_key_env == "OPENAI_API_KEY" and other.api_key() == "sk-never-stored"
    assert "sk-never-stored" not in repr(other.describe())
    path.write_text("[models.x]\ntemperature = 'hot'\n")
    with pytest.raises(DataError, match=r"models.toml: \[models.x\]: temperature must be a number"):
        resolve_model("x", path)


def test_a_name_the_models_table_does_not_list_is_an_error_even_with_a_default_endpoint(
        tmp_path: Path) -> None:
    """Before: with base_url in [defaults] a typo was sent to that endpoint as the model id."""
    path = tmp_path / "models.toml"
    path.write_text('[defaults]\nbase_url = "http://127.0.0.1:9/v1"\n'
                    '[models.normal]\nmodel = "x"\n[models.other]\nmodel = "y"\n')
    with pytest.raises(DataError, match=r"models\.toml: no \[models\.typo\] entry "
                                        r"\(models: normal, other\)$"):
        resolve_model("typo", path)
    assert resolve_model("normal", path).base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(("setting", "problem"), [
    ("base_url = 5", "base_url must be a string, not 5"),
    ('base_url = "ftp://x"', "base_url must be an http(s) URL"),
    ("model = 5", "model must be a string, not 5"),
    ('model = ""', "model must not be empty"),
    ("price = 5", "price must be a string, not 5"),
    ("api_key_env = 5", "api_key_env must be a string, not 5"),
    ("max_retries = -1", "max_retries must be at least 0, not -1"),
    ("max_retries = 1.5", "max_retries must be a whole number, not 1.5"),
    # before: taken; the back-off's arithmetic then overflowed, a failed generation
    ("max_retries = 100000000000", "max_retries must be at most 100, not 100000000000"),
    ("timeout_s = 1e12", "timeout_s must be at most 86400, not 1000000000000.0"),
    ("timeout_s = -5", "timeout_s must be more than 0, not -5"),
    ("timeout_s = 0", "timeout_s must be more than 0, not 0"),
    ("timeout_s = nan", "timeout_s must be a finite number"),
    ('timeout_s = "20"', "timeout_s must be a number, not '20'"),
    ("retry_base_s = -1", "retry_base_s must be at least 0, not -1"),
    ("max_concurrency = 0", "max_concurrency must be at least 1, not 0"),
    ("temperature = -7", "temperature must be at least 0, not -7"),
    ("bogus = 1", "unknown setting 'bogus' (allowed: model, base_url,"),
])
@pytest.mark.parametrize("table", ["models.m", "defaults"])
def test_model_settings_of_the_wrong_type_or_range_are_refused_when_the_file_is_read(
        tmp_path: Path, table: str, setting: str, problem: str) -> None:
    """Before: base_url = 5 was a traceback, model = 5 a paid call that then failed,
    max_retries = -1 an UnboundLocalError, timeout_s = 0 a failure on every call."""
    path = tmp_path / "models.toml"
    path.write_text(f'[{table}]\n{setting}\n')
    with pytest.raises(DataError) as error:
        ModelSettings.load(path)
    assert str(error.value).startswith(f"{path}: [{table}]: {problem}")


def test_a_bad_model_setting_is_one_line_and_exit_2_before_anything_runs(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[defaults]\nbase_url = "http://127.0.0.1:9/v1"\n[models.m]\nbase_url = 5\n')
    result = restbench("run", "-s", MINI, "-g", "single-step", "-m", "m", "--llm-config", path,
                       "-o", tmp_path / "out")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: [models.m]: base_url must be a string, not 5"]


@pytest.mark.parametrize(("settings", "problem"), [
    ("max_tokens = 4000\ncontext_tokens = 1000", "max_tokens 4000 leaves"),
    # the answer limit a local endpoint gets when none is set
    ("context_tokens = 1500", "max_tokens 2048 (the default for a local endpoint) leaves"),
])
def test_an_answer_limit_that_leaves_no_room_for_the_prompt_is_refused(
        tmp_path: Path, settings: str, problem: str) -> None:
    """Before: accepted, then every generation failed with '-3000 available'."""
    path = tmp_path / "models.toml"
    path.write_text(f'[models.m]\nbase_url = "http://127.0.0.1:9/v1"\n{settings}\n')
    with pytest.raises(DataError) as error:
        resolve_model("m", path)
    assert str(error.value).startswith(f"model 'm' ({path}): {problem} no room for the prompt in "
                                       "context_tokens ")
    path.write_text('[models.m]\nbase_url = "http://127.0.0.1:9/v1"\nmax_tokens = 999\n'
                    'context_tokens = 1000\n')
    assert resolve_model("m", path).max_tokens == 999


def test_without_a_config_file_the_missing_key_message_names_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_BASE_URL", "RESTBENCH_LLM_BASE_URL", "RESTBENCH_LLM_CONFIG",
                     "OPENAI_API_KEY", "RESTBENCH_LLM_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(tmp_path)  # no restbench-models.toml here
    with pytest.raises(DataError) as error:
        check_credentials(resolve_model("gpt-5-mini"))
    assert str(error.value) == (
        "model 'gpt-5-mini': no API key for https://api.openai.com/v1: set OPENAI_API_KEY, or "
        "name a key variable with api_key_env in a model config file (--llm-config)")


@pytest.mark.parametrize(("answer", "expected"), [
    ("Here it is:\n```python\nimport requests\n\ndef test_a():\n    assert 1\n```\nDone.",
     "import requests\n\ndef test_a():\n    assert 1\n"),
    ("```\ndef test_b():\n    pass\n```", "def test_b():\n    pass\n"),
    ("def test_c():\n    assert True\n", "def test_c():\n    assert True\n"),
    ("Sure! The test:\nimport os\ndef test_d():\n    assert os\nHope it helps.",
     "import os\ndef test_d():\n    assert os\n"),
])
def test_code_is_extracted_from_fenced_and_unfenced_answers(answer: str, expected: str) -> None:
    assert extract_python(answer) == expected


@pytest.mark.parametrize("answer", ["", "I cannot write this test.",
                                    "```python\nprint('no test here')\n```"])
def test_answers_without_test_code_are_refused(answer: str) -> None:
    with pytest.raises(NoCodeError):
        extract_python(answer)


@pytest.mark.parametrize(("entry", "problem"), [
    ('input = 1\noutput = 2\naliases = "notalist"', "aliases must be a list of names, not 'notalist'"),
    ("input = 1\noutput = 2\naliases = [1]", "aliases must be a list of names, not [1]"),
    ("input = -1\noutput = 2", "input cannot be negative, not -1"),
    ('input = "1"\noutput = 2', "input must be a number (USD per million tokens), not '1'"),
    ("input = 1", "missing 'output' (USD per million tokens)"),
    ("input = 1\noutput = 2\nnote = 'x'", "unknown key 'note' (allowed: input, output, aliases)"),
])
def test_a_price_entry_of_the_wrong_shape_is_refused(tmp_path: Path, entry: str,
                                                      problem: str) -> None:
    """Before: aliases = "notalist" became the aliases n, o, t, a, ..., so a model named `a`
    was billed at this price."""
    path = tmp_path / "models.toml"
    path.write_text(f"[prices.mine]\n{entry}\n")
    with pytest.raises(DataError) as error:
        ModelSettings.load(path)
    assert str(error.value) == f"{path}: price of 'mine': {problem}"


@pytest.mark.parametrize(("content", "problem"), [
    # Before: UnicodeDecodeError tracebacks (prices, agent-eval, grade)
    (b"\xff\xfe[defaults]\n", "not UTF-8 text (byte 0)"),
    # Before: RecursionError tracebacks
    (b"a = " + b"[" * 100_000 + b"]" * 100_000, "not valid TOML: nested too deeply"),
    # Before: taken; which price a call got depended on the order of the entries
    (b'[prices.x]\ninput = 1\noutput = 2\naliases = ["y"]\n[prices.y]\ninput = 3\noutput = 4\n',
     "price of 'x': alias 'y' is also the price of 'y' in this file"),
    # Before: taken, and gpt-5-mini silently billed at x's price
    (b'[prices.x]\ninput = 1\noutput = 2\naliases = ["GPT-5-mini"]\n',
     ("price of 'x': alias 'GPT-5-mini' is the name of a known price; to change it, give "
      "[prices.GPT-5-mini]")),
])
def test_a_config_file_that_cannot_be_taken_is_one_line(tmp_path: Path, content: bytes,
                                                         problem: str) -> None:
    path = tmp_path / "models.toml"
    path.write_bytes(content)
    with pytest.raises(DataError) as error:
        ModelSettings.load(path)
    assert str(error.value) == f"{path}: {problem}"
    done = restbench("prices", "--llm-config", path)
    assert done.returncode == 2 and done.stderr == f"error: {path}: {problem}\n"


def test_an_answer_larger_than_any_completion_is_not_read_whole_nor_asked_again() -> None:
    """Before: a 60 MB answer was read whole, kept in results.json and the call store (peak
    RSS 2.3 GB for two agent-eval cases)."""
    huge = Reply(content="x" * (ANSWER_LIMIT_BYTES + 1))
    with FakeLLMServer([huge, "never asked"]) as fake, pytest.raises(LLMError) as error:
        complete(config(fake))
    assert str(error.value) == (
        f"model 'gpt-5-mini' at {fake.base_url}: HTTP 200: an answer over 8 MiB, more than any "
        "chat completion holds (gave up after 1 attempt)")
    assert len(fake.requests) == 1


def test_a_streamed_answer_is_named_and_not_asked_again() -> None:
    """Before: "malformed answer (Expecting value: line 1 column 1 (char 0))", asked again."""
    stream = Reply(body='data: {"choices": [{"delta": {"content": "hi"}}]}\n\ndata: [DONE]\n\n',
                   content_type="text/event-stream; charset=utf-8")
    with FakeLLMServer([stream, "never asked"]) as fake, pytest.raises(LLMError) as error:
        complete(config(fake))
    assert str(error.value) == (
        f"model 'gpt-5-mini' at {fake.base_url}: the endpoint answered a stream "
        "(text/event-stream), not one JSON answer: restbench does not read streamed answers; "
        "turn streaming off on the server (gave up after 1 attempt)")
    assert len(fake.requests) == 1


def test_a_price_may_still_be_changed_under_its_own_name(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[prices.gpt-5-mini]\ninput = 1\noutput = 2\naliases = ["mini"]\n')
    table = ModelSettings.load(path).prices
    assert table.cost("gpt-5-mini", 10**6, 10**6) == table.cost("mini", 10**6, 10**6) == 3.0

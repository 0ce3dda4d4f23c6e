"""What a user with a local model hit, reproduced on the fake endpoint with that server's quirks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from restbench.errors import DataError
from restbench.llm import (
    ChatClient,
    CutOffAnswer,
    LLMError,
    ModelConfig,
    WaitLedger,
    check_credentials,
    queue_wait,
    resolve_model,
)
from restbench.llm.fake import FakeLLMServer, Quirks, Reply
from restbench.store import ResultStore

HELLO = [{"role": "user", "content": "hello"}]
TOOL = {"type": "function", "function": {"name": "list_todos", "description": "GET /todos",
                                         "parameters": {"type": "object", "properties": {}}}}


def local(fake: FakeLLMServer, tmp_path: Path, extra: str = "") -> ModelConfig:
    """The model as a user configures a local server: base URL, no key, nothing else."""
    path = tmp_path / "models.toml"
    path.write_text(f'[models.tiny]\nbase_url = "{fake.base_url}"\napi_key_env = ""\n'
                    f"retry_base_s = 0.01\n{extra}")
    return resolve_model("tiny", path)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_tool_calls_work_on_a_server_that_wants_tool_choice(tmp_path: Path) -> None:
    script = [Reply(tool_calls=[("list_todos", {})]), "There are 3 todos."]
    with FakeLLMServer(script, Quirks(tools_need_choice=True, rejects_null_content=True)) as fake:
        async def conversation() -> tuple[Any, Any]:
            async with ChatClient(local(fake, tmp_path)) as client:
                first = await client.complete(HELLO, tools=[TOOL])
                follow_up = [*HELLO, first.message,
                             {"role": "tool", "tool_call_id": first.tool_calls[0].id,
                              "content": "200 []"}]
                return first, await client.complete(follow_up, tools=[TOOL])
        first, second = run(conversation())
    assert [call.name for call in first.tool_calls] == ["list_todos"]
    assert fake.requests[0]["tool_choice"] == "auto"
    assert first.message["content"] == ""  # not null: the server refuses null with a 500
    assert second.content == "There are 3 todos."


def test_a_repeated_internal_error_is_shown_whole_and_not_retried(tmp_path: Path) -> None:
    broken = [*HELLO, {"role": "assistant", "content": None}]
    with FakeLLMServer(["never"] * 5, Quirks(rejects_null_content=True)) as fake, \
            pytest.raises(LLMError) as error:
        async def call() -> None:
            async with ChatClient(local(fake, tmp_path)) as client:
                await client.complete(broken)
        run(call())
    assert "Input should be a valid string" in str(error.value)  # past the old 200 characters
    assert len(fake.requests) == 2  # the same 500 twice: no point in asking again


def test_local_models_get_a_token_limit_and_one_request_at_a_time(tmp_path: Path) -> None:
    slow = [Reply(content=f"answer {i}", delay_s=0.3) for i in range(4)]
    with FakeLLMServer(slow, Quirks(one_at_a_time=True)) as fake:
        config = local(fake, tmp_path, "timeout_s = 0.6\n")
        assert (config.max_concurrency, config.max_tokens) == (1, 2048)
        waits = WaitLedger()

        async def four() -> list[Any]:
            queue_wait.set(waits)
            async with ChatClient(config) as client:
                return await asyncio.gather(*(client.complete([{"role": "user", "content": str(i)}])
                                              for i in range(4)))
        answers = run(four())
    # each answer takes 0.3 s; a timeout of 0.6 s counted while queued would fail the last two
    assert sorted(a.content for a in answers) == [f"answer {i}" for i in range(4)]
    assert fake.requests[0]["max_tokens"] == 2048
    assert fake.most_in_flight == 1
    assert waits.total > 0.5  # queueing is measured, so generation time can leave it out


def test_the_finding_itself_a_queue_at_the_server_times_out(tmp_path: Path) -> None:
    """The old default (4 in flight) against a one-at-a-time server: later requests time out."""
    slow = [Reply(content="late", delay_s=0.3)] * 4
    with FakeLLMServer(slow, Quirks(one_at_a_time=True)) as fake:
        config = local(fake, tmp_path, "timeout_s = 0.6\nmax_concurrency = 4\nmax_retries = 0\n")

        async def four() -> list[Any]:
            async with ChatClient(config) as client:
                return await asyncio.gather(*(client.complete([{"role": "user", "content": str(i)}])
                                              for i in range(4)), return_exceptions=True)
        answers = run(four())
    assert any(isinstance(a, LLMError) and "no answer within" in str(a) for a in answers)


def test_an_answer_cut_at_the_limit_is_its_own_failure_and_not_kept(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "store.sqlite3")
    script = [Reply(content="```python\ndef test_a(", finish_reason="length", usage=(10, 2048)),
              "```python\ndef test_a():\n    assert 1\n```"]
    with FakeLLMServer(script) as fake:
        async def call() -> Any:
            async with ChatClient(local(fake, tmp_path), cache=store) as client:
                return await client.complete(HELLO)
        with pytest.raises(CutOffAnswer, match="finish_reason length, 2048 tokens") as error:
            run(call())
        assert error.value.result.content.startswith("```python\ndef test_a(")
        again = run(call())  # the cut answer was not stored: a rerun asks again
    assert (again.cached, len(fake.requests)) == (False, 2)


def test_a_base_url_without_v1_gets_a_hint(tmp_path: Path) -> None:
    with FakeLLMServer(["never"]) as fake:
        config = ModelConfig("tiny", "tiny", fake.base_url.removesuffix("/v1"), max_retries=0)

        async def call() -> None:
            async with ChatClient(config) as client:
                await client.complete(HELLO)
        with pytest.raises(LLMError, match=r"HTTP 404.*try base_url http://127\.0\.0\.1:\d+/v1"):
            run(call())


def test_context_length_is_configured_or_read_from_the_endpoint(tmp_path: Path) -> None:
    models = [{"id": "other", "max_model_len": 1}, {"id": "tiny", "max_model_len": 8192}]
    with FakeLLMServer([], models=models) as fake:
        async def ask(config: ModelConfig) -> int | None:
            async with ChatClient(config) as client:
                return await client.context_tokens()
        assert run(ask(local(fake, tmp_path))) == 8192
        assert run(ask(local(fake, tmp_path, "context_tokens = 4096\n"))) == 4096


def test_an_endpoint_that_reported_no_context_length_is_asked_again_by_the_next_client(
        tmp_path: Path) -> None:
    # A loopback port can host another server later (a restarted vLLM, the next test's fake).
    with FakeLLMServer([]) as fake:
        async def ask() -> list[int | None]:
            async with ChatClient(local(fake, tmp_path)) as client:
                together = await asyncio.gather(client.context_tokens(), client.context_tokens())
                return [*together, await client.context_tokens()]
        assert run(ask()) == [None, None, None]
        fake.models = [{"id": "tiny", "max_model_len": 2048}]
        assert run(ask()) == [2048, 2048, 2048]


def test_a_config_file_does_not_fall_through_to_the_hosted_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_BASE_URL", "RESTBENCH_LLM_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = tmp_path / "mine.toml"
    path.write_text('[models.tiny]\nbase_url = "http://127.0.0.1:8080/v1"\n'
                    '[models.nourl]\nmodel = "x"\n')
    with pytest.raises(DataError, match=r"mine\.toml: no \[models\.tiyn\] entry "
                                        r"\(models: nourl, tiny\)"):
        resolve_model("tiyn", path)
    with pytest.raises(DataError, match=r"mine\.toml: \[models\.nourl\] has no base_url"):
        resolve_model("nourl", path)
    path.write_text('[models.hosted]\nbase_url = "https://example.invalid/v1"\n'
                    'api_key_env = "NOT_SET_KEY"\n')
    with pytest.raises(DataError, match=r"set NOT_SET_KEY, or name another with api_key_env "
                                        r"in .*mine\.toml$"):
        check_credentials(resolve_model("hosted", path))


def test_the_prices_hint_keeps_its_section_name() -> None:
    from tests.cli_helpers import restbench

    shown = restbench("prices")
    assert shown.returncode == 0, shown.stderr
    assert "[prices.NAME] in the model config file" in shown.stdout  # not eaten as markup

"""The prompts of the LLM generators. Kept apart so they can be read, cited and changed in one place.

Structure (what the note and README describe). What stays the same from call to call comes
first, so that endpoints with a prefix cache reuse it; the OpenAPI document is compact JSON:
- writer, first call: system = the test engineer's rules; user = the OpenAPI document (complete,
  or reduced to fit: restbench.llm.fitting), the base URL, optionally an existing test whose
  conventions to follow, then the requirement;
- judge: system = the reviewer's task and the one-word verdict format; user = OpenAPI document,
  requirement, the test code, its pytest output and the HTTP trace it produced;
- writer, revision: the first conversation continued with the previous code as the assistant's
  turn, then the pytest output, the HTTP trace and the judge's reason.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from restbench.generators.languages import Language

Message = dict[str, Any]
TRACE_EXCHANGES = 30
TRACE_BODY_CHARS = 400
OUTPUT_CHARS = 4000

WRITER_SYSTEM = """\
You are a senior test engineer. You write automated black-box tests for a REST API in Python \
with pytest and the requests library.

Rules:
- Write one self-contained pytest file that checks the given requirement, and nothing beyond it.
- Send every request to the base URL you are given; define it once as BASE_URL.
- Create the data the test needs through the API itself; do not rely on data left by other tests.
- Assert exactly what the requirement states: status codes, response fields and their values, \
and the effects other requests can observe.
- No sleeps, no retries, no skipped or conditional assertions.
- Answer with the complete file in one ```python code block and nothing else."""

JUDGE_SYSTEM = """\
You review an automated API test written for one requirement. You see the requirement, the \
API's OpenAPI document, the test code, the pytest output of running it against the service and \
the HTTP exchanges it made.

Decide whether the test is finished: it runs without errors of its own making, exercises the \
behaviour the requirement describes, and asserts what the requirement states. If it is, answer \
FINISH. If another revision is needed, answer REFINE.

Answer format: the first line is exactly FINISH or REFINE; the second line is one sentence \
saying why."""

REVISION_REQUEST = """\
The test was run against the service. Revise it.

Reviewer's verdict: {reason}

Pytest output:
```
{output}
```

HTTP exchanges the test made:
{trace}

Write the complete revised file, following the same rules, in one ```python code block."""


def openapi_text(openapi: dict[str, Any] | str) -> str:
    return openapi if isinstance(openapi, str) else json.dumps(openapi, separators=(",", ":"),
                                                                ensure_ascii=False)


def _python(language: Language | None) -> bool:
    return language is None or language.name == "python"


def writer_messages(requirement: str, openapi: dict[str, Any] | str, base_url: str,
                    seed_test: str | None = None,
                    language: Language | None = None) -> list[Message]:
    """The writer's first call; `language` (default Python) says what kind of test to write."""
    parts = [f"OpenAPI document:\n```json\n{openapi_text(openapi)}\n```", f"Base URL: {base_url}"]
    if seed_test:
        parts.append("An existing test of this API; follow its conventions:\n"
                     f"```python\n{seed_test.strip()}\n```")
    parts.append(f"Requirement:\n{requirement.strip()}")
    parts.append("Write the pytest file for the requirement." if language is None
                 else language.ask)
    return [{"role": "system", "content": WRITER_SYSTEM if language is None
             else language.writer_system},
            {"role": "user", "content": "\n\n".join(parts)}]


def format_trace(exchanges: list[dict[str, Any]] | tuple[dict[str, Any], ...],
                 last: int | None = None) -> str:
    """method URL -> status, with request and response bodies cut short; only the `last`
    exchanges when given (a prompt that must shrink)."""
    if not exchanges:
        return "(the test made no HTTP request)"
    if last is not None and len(exchanges) > last:
        return (f"... {len(exchanges) - last} earlier exchanges left out\n"
                + format_trace(exchanges[-last:]))

    def cut(text: str | None) -> str:
        text = (text or "").strip()
        return text if len(text) <= TRACE_BODY_CHARS else text[:TRACE_BODY_CHARS] + " …"

    lines = []
    for number, exchange in enumerate(exchanges[:TRACE_EXCHANGES], 1):
        lines.append(f"{number}. {exchange.get('method')} {exchange.get('url')} -> "
                     f"{exchange.get('status')}")
        for name, value in (exchange.get("request_headers") or {}).items():
            lines.append(f"   header:   {name}: {cut(value)}")
        if exchange.get("request_body"):
            lines.append(f"   request:  {cut(exchange['request_body'])}")
        if exchange.get("response_body"):
            lines.append(f"   response: {cut(exchange['response_body'])}")
    if len(exchanges) > TRACE_EXCHANGES:
        lines.append(f"... {len(exchanges) - TRACE_EXCHANGES} more exchanges left out")
    return "\n".join(lines)


def cut_output(output: str) -> str:
    output = output.strip()
    return output if len(output) <= OUTPUT_CHARS else "… " + output[-OUTPUT_CHARS:]


def judge_messages(requirement: str, openapi: dict[str, Any] | str, code: str, output: str,
                   trace: str, language: Language | None = None) -> list[Message]:
    fence = "python" if language is None else language.fence
    output_name = "Pytest output" if language is None else language.output_name
    system = JUDGE_SYSTEM if _python(language) else \
        JUDGE_SYSTEM.replace("the pytest output of running it", "the output of running it")
    user = "\n\n".join([
        f"OpenAPI document:\n```json\n{openapi_text(openapi)}\n```",
        f"Requirement:\n{requirement.strip()}",
        f"Test code:\n```{fence}\n{code.strip()}\n```",
        f"{output_name}:\n```\n{cut_output(output)}\n```",
        f"HTTP exchanges:\n{trace}",
        "Your verdict (FINISH or REFINE, then one sentence):"])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def revision_messages(first: list[Message], previous_code: str, output: str, trace: str,
                      reason: str, language: Language | None = None) -> list[Message]:
    fence = "python" if language is None else language.fence
    request = REVISION_REQUEST if _python(language) else REVISION_REQUEST.replace(
        "Pytest output:", f"{language.output_name}:").replace("```python", f"```{fence}")
    return [*first, {"role": "assistant", "content": f"```{fence}\n{previous_code.strip()}\n```"},
            {"role": "user", "content": request.format(
                reason=reason or "(none given)", output=cut_output(output), trace=trace)}]

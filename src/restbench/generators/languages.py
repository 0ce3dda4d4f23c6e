"""The kinds of test the LLM generators can ask for (`-a single-step.language=...`): what the
writer is told, how the test is taken out of the answer, and which runner runs it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from restbench.errors import GeneratorError
from restbench.generators.prompts import WRITER_SYSTEM
from restbench.llm.extract import NoCodeError, extract_python

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_JS_TEST = re.compile(r"\btest\s*\(|\bit\s*\(")


@dataclass(frozen=True)
class Language:
    name: str
    runner: str
    fence: str  # the code block tag the writer is asked for
    output_name: str  # how the run's output is called in the judge and revision prompts
    writer_system: str
    ask: str  # the user prompt's last line

    def extract(self, text: str) -> str:
        if self.name == "python":
            return extract_python(text)
        if self.name == "javascript":
            return _extract_javascript(text)
        return _extract_collection(text)


def _blocks(text: str) -> list[tuple[str, str]]:
    return [(lang.lower(), body) for lang, body in _FENCE.findall(text or "")]


def _extract_javascript(text: str) -> str:
    candidates = [body for lang, body in _blocks(text)
                  if lang in ("", "javascript", "js", "mjs", "node") and _JS_TEST.search(body)]
    if candidates:
        return max(candidates, key=len).strip() + "\n"
    stripped = (text or "").strip()
    if "node:test" in stripped and _JS_TEST.search(stripped) and "```" not in stripped:
        return stripped + "\n"
    preview = " ".join(stripped.split())[:80]
    raise NoCodeError(f"the answer contains no node:test test: {preview!r}" if preview
                      else "the answer is empty")


def _is_collection(body: str) -> bool:
    try:
        document = json.loads(body)
    except ValueError:
        return False
    return isinstance(document, dict) and isinstance(document.get("item"), list)


def _extract_collection(text: str) -> str:
    candidates = [body for lang, body in _blocks(text)
                  if lang in ("", "json") and _is_collection(body)]
    stripped = (text or "").strip()
    if not candidates and _is_collection(stripped):
        candidates = [stripped]
    if candidates:
        return max(candidates, key=len).strip() + "\n"
    preview = " ".join(stripped.split())[:80]
    raise NoCodeError(f"the answer contains no Postman collection (JSON with an 'item' list): "
                      f"{preview!r}" if preview else "the answer is empty")


PYTHON = Language("python", "pytest", "python", "Pytest output", WRITER_SYSTEM,
    "Write the pytest file for the requirement.")

JAVASCRIPT = Language("javascript", "node", "javascript", "Test runner output", """\
You are a senior test engineer. You write automated black-box tests for a REST API in \
JavaScript for Node.js's built-in test runner (node --test), with the global fetch.

Rules:
- Write one self-contained ES module that checks the given requirement, and nothing beyond it: \
import { test } from "node:test" and assert from "node:assert/strict"; no other packages.
- Send every request to the base URL you are given; define it once as \
const BASE_URL = process.env.BASE_URL ?? "<the base URL>".
- Create the data the test needs through the API itself; do not rely on data left by other tests.
- Assert exactly what the requirement states with node:assert: status codes, response fields \
and their values, and the effects other requests can observe.
- No sleeps, no retries, no skipped or conditional assertions.
- Answer with the complete file in one ```javascript code block and nothing else.""",
    "Write the JavaScript test file for the requirement.")

POSTMAN = Language("postman", "newman", "json", "Newman output", """\
You are a senior test engineer. You write automated black-box tests for a REST API as Postman \
collections (format v2.1), run with newman.

Rules:
- Write one collection that checks the given requirement, and nothing beyond it: its requests \
in order in "item", each with a "test" event script using pm.test and pm.expect.
- Write every URL as {{baseUrl}} followed by the path; newman sets baseUrl to the base URL \
you are given. Pass values between requests with pm.collectionVariables.
- Create the data the test needs through the API itself; do not rely on data left by other tests.
- Assert exactly what the requirement states: status codes, response fields and their values, \
and the effects other requests can observe.
- No delays, no retries, no skipped or conditional assertions.
- Answer with the complete collection JSON in one ```json code block and nothing else.""",
    "Write the Postman collection for the requirement.")

LANGUAGES = {language.name: language for language in (PYTHON, JAVASCRIPT, POSTMAN)}


def language_named(name: str, generator: str) -> Language:
    if name not in LANGUAGES:
        raise GeneratorError(f"{generator}: unknown language {name!r} (choose "
                             + ", ".join(LANGUAGES) + ")")
    return LANGUAGES[name]

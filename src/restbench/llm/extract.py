"""Getting the pytest file out of a model's answer, fenced or not."""

from __future__ import annotations

import re

from restbench import python_ast
from restbench.llm.client import LLMError

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_TEST = re.compile(r"^\s*(async\s+)?def\s+test", re.MULTILINE)


class NoCodeError(LLMError):
    """The answer holds no Python test code."""


def _parses(code: str) -> bool:
    try:
        python_ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _trim_prose(text: str) -> str | None:
    """An unfenced answer: drop prose lines around the code until what is left parses."""
    lines = text.strip().splitlines()
    starts = [i for i, line in enumerate(lines)
              if re.match(r"\s*(import |from \S+ import |def |async def |class |@|#|[A-Z_]+ =)",
                          line)]
    for start in starts[:5]:
        for end in range(len(lines), start, -1):
            candidate = "\n".join(lines[start:end]).strip()
            if _TEST.search(candidate) and _parses(candidate):
                return candidate + "\n"
    return None


def extract_python(text: str) -> str:
    """The test code in `text`: the fenced block with test functions (the largest such block),
    else the answer itself when it is code, else the code between leading and trailing prose."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text or "")]
    candidates = [body for lang, body in blocks if lang in ("", "python", "py", "python3")
                  and _TEST.search(body)]
    if candidates:
        return max(candidates, key=len).strip() + "\n"
    stripped = (text or "").strip()
    if stripped and _TEST.search(stripped) and _parses(stripped):
        return stripped + "\n"
    trimmed = _trim_prose(stripped) if stripped else None
    if trimmed:
        return trimmed
    preview = " ".join(stripped.split())[:80]
    raise NoCodeError(f"the answer contains no pytest test function: {preview!r}"
                      if preview else "the answer is empty")

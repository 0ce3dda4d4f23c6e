"""Makes docs/report.png, the README's picture of a real report.

Two real runs on the todo service, then `restbench report` on both, opened in headless Chromium:
- `restbench run -s todo` (golden and the no-LLM baselines);
- `restbench run -s todo -g single-step -m gpt-5-mini` against restbench's fake model endpoint
  (restbench.llm.fake), scripted to answer like a middling model: the precise wording gets the
  requirement's golden test, the vague wording gets it for every other requirement and a smoke
  test that checks nothing of the requirement for the rest.

    python docs/report-screenshot.py [WORKDIR]     (needs /usr/bin/chromium and playwright)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from restbench.benchmark import resolve_services
from restbench.llm.fake import FakeLLMServer

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SMOKE = ("import requests\n\n\ndef test_service_answers():\n"
         "    assert requests.get('http://localhost:8000/openapi.json', timeout=10)"
         ".status_code == 200\n")


def scripted_answers() -> Any:
    (todo,) = resolve_services(["todo"])
    golden = {r.id: todo.golden_path(r).read_text(encoding="utf-8") for r in todo.requirements}

    def answer(request: dict[str, Any]) -> str:
        prompt = request["messages"][1]["content"]
        for index, requirement in enumerate(todo.requirements):
            if requirement.precise in prompt:
                return f"```python\n{golden[requirement.id]}```"
            if requirement.vague in prompt:
                code = golden[requirement.id] if index % 2 == 0 else SMOKE
                return f"```python\n{code}```"
        return "I cannot tell which requirement this is."

    return answer


def restbench(*args: object) -> None:
    subprocess.run([sys.executable, "-m", "restbench.cli", *map(str, args)], check=True)


def main() -> None:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="shot-"))
    restbench("run", "-s", "todo", "-o", work / "baselines")
    with FakeLLMServer(scripted_answers()) as fake:
        config = work / "models.toml"
        config.write_text(f'[defaults]\nbase_url = "{fake.base_url}"\napi_key_env = ""\n')
        restbench("run", "-s", "todo", "-g", "single-step", "-m", "gpt-5-mini",
                  "--llm-config", config, "-o", work / "single-step")
    html = work / "report.html"
    restbench("report", work / "baselines", work / "single-step", "-o", html)

    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.goto(html.resolve().as_uri())
        page.wait_for_selector("body[data-ready]")
        page.wait_for_timeout(500)
        shot = Path(__file__).parent / "report.png"
        page.screenshot(path=str(shot))
        browser.close()
    print(f"{shot}: {shot.stat().st_size / 1000:.0f} kB (report in {work})")


if __name__ == "__main__":
    main()

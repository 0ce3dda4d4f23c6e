"""Opening report pages in Debian's headless Chromium, as a reader would (through playwright's
driver; playwright's own browser builds are never downloaded)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
INSTALL = ("sudo apt-get install -y chromium (Debian's package; the suite drives it with "
           "playwright: pip install '.[test]')")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def require_browser() -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing; install it with: {INSTALL}")
    try:
        import playwright  # noqa: F401
    except ImportError:
        pytest.fail("the playwright package is missing; install the test extra: "
                    "pip install '.[test]'")


@contextmanager
def browser() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


class OfflinePage:
    """A page that may load nothing but file:// URLs; it records console errors, page errors
    and every request that tried to leave the disk."""

    def __init__(self, launched: Any, width: int = 1400, height: int = 1000) -> None:
        self.context = launched.new_context(viewport={"width": width, "height": height},
                                            offline=True)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.network: list[str] = []
        self.page.on("console",
                     lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(("file://", "data:", "blob:")):
            route.continue_()
        else:
            self.network.append(route.request.url)
            route.abort()

    def open(self, path: Path) -> Any:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_selector("body[data-ready]", timeout=60_000)
        return self.page

    def close(self) -> None:
        self.context.close()

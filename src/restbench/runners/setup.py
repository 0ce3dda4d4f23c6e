"""`restbench setup TOOL`: installing the tools of runners that are not Python packages.

Tools are pinned and installed with their own package manager into a folder restbench manages
($RESTBENCH_TOOLS_DIR, else ~/.local/share/restbench/tools), never silently at run time: a run
that needs a missing tool stops with the command that installs it."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from restbench.errors import RestbenchError
from restbench.paths import file_in_the_way

TOOLS_ENV = "RESTBENCH_TOOLS_DIR"
INSTALL_TIMEOUT_S = 600


@dataclass(frozen=True)
class Tool:
    name: str
    package: str  # npm package
    version: str  # pinned
    script: str  # the entry script inside node_modules/<package>/


NEWMAN = Tool("newman", "newman", "6.2.2", "bin/newman.js")
TOOLS = {tool.name: tool for tool in (NEWMAN,)}


class ToolMissing(RestbenchError):
    """A runner's tool is not installed."""


def tools_root() -> Path:
    configured = os.environ.get(TOOLS_ENV)
    return Path(configured) if configured else Path.home() / ".local/share/restbench/tools"


def tool_prefix(tool: Tool) -> Path:
    return tools_root() / f"{tool.name}-{tool.version}"


def installed_script(tool: Tool) -> Path:
    script = tool_prefix(tool) / "node_modules" / tool.package / tool.script
    if not script.is_file():
        raise ToolMissing(f"{tool.name} {tool.version} is not installed (looked in "
                          f"{tool_prefix(tool)}): run 'restbench setup {tool.name}'")
    return script


def install(name: str) -> Path:
    """Installs the pinned tool with npm (idempotent); returns its folder."""
    if name not in TOOLS:
        raise RestbenchError(f"unknown tool '{name}' (known: {', '.join(sorted(TOOLS))})")
    tool = TOOLS[name]
    npm = shutil.which("npm")
    if npm is None:
        raise RestbenchError(f"installing {name} needs npm, which is not installed: "
                             "apt-get install npm")
    prefix = tool_prefix(tool)
    try:
        prefix.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = file_in_the_way(prefix)
        reason = f"{blocking} is a file, not a folder" if blocking else exc.strerror
        where = f" (${TOOLS_ENV})" if os.environ.get(TOOLS_ENV) else ""
        raise RestbenchError(f"{prefix}{where}: cannot make the folder {name} goes in: "
                             f"{reason}") from None
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "--loglevel=error", "--ignore-scripts", f"{tool.package}@{tool.version}"],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RestbenchError(f"npm did not install {name} within {INSTALL_TIMEOUT_S} s") \
            from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RestbenchError(f"npm could not install {tool.package}@{tool.version}: {last}")
    installed_script(tool)
    return prefix

"""Calls: network clients and where they point, files and where they lie (a part of the
static-security checker, `analyzer._Checker`)."""

from __future__ import annotations

import ast

from restbench.grading.security import rules
from restbench.grading.security.checker_state import CheckerState
from restbench.grading.security.findings import Kind
from restbench.grading.security.paths import PathState
from restbench.grading.security.urls import UrlState
from restbench.grading.security.values import NO, snippet


class CallChecks(CheckerState):
    def call(self, node: ast.Call) -> None:
        funcs = self.resolver.qualnames(node.func)
        self.network(node, funcs)
        self.files(node, funcs)
        self.nested_code(node, funcs)

    def network(self, node: ast.Call, funcs: set[str]) -> None:
        if any(k.arg == "proxies" for k in node.keywords) or any(
                k.arg in ("proxy", "proxies", "mounts") and funcs & {
                    f"{c}" for c in rules.CLIENTS} for k in node.keywords):
            self.flag(node, Kind.NETWORK, f"routes requests through a proxy: {snippet(node)}")
        judged = False
        for name in sorted(funcs):
            position = rules.MODULE_CALLS.get(name)
            if position is None:
                position = self._client_method(name)
            if position is not None:
                self.judge_url(node, self._arg(node, position, "url"), rules.display(name))
                judged = True
            if name in rules.CLIENTS_WITH_BASE_URL:
                base = self._arg(node, 0 if name == "aiohttp.ClientSession" else -1, "base_url")
                if base is not None:
                    self.judge_url(node, base, f"{rules.display(name)}(base_url=...)")
            if name in rules.CONNECTIONS:
                self.judge_connection(node, name)
                judged = True
        if not judged and isinstance(node.func, ast.Attribute) \
                and node.func.attr in rules.HTTP_METHOD_NAMES:
            position = rules.CLIENT_METHODS[node.func.attr]
            url = self._arg(node, position, "url")
            if url is not None and isinstance(self.resolver.const(url), str):
                state = self.urls.url(url)
                if state.kind == "foreign":
                    self._url_finding(node, state, f".{node.func.attr}")

    def _client_method(self, name: str) -> int | None:
        for client in rules.CLIENTS:
            prefix = f"{client}()."
            if name.startswith(prefix):
                method = name[len(prefix):]
                return rules.CLIENT_METHODS.get(method)
        return None

    def judge_url(self, node: ast.Call, url: ast.expr | None, what: str) -> None:
        if url is None:
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                    k.arg is None for k in node.keywords):
                self._url_finding(node, UrlState("unknown", "arguments passed with * or **"),
                                  what)
            return
        state = self.urls.url(url)
        if state.kind in ("foreign", "unknown"):
            self._url_finding(node, state, what)

    def _url_finding(self, node: ast.AST, state: UrlState, what: str) -> None:
        if state.kind == "foreign":
            message = (f"network call to {state.detail}, not the base URL's host "
                       f"({self.urls.origin}): {what}")
        else:
            message = (f"network call to a URL not shown to be the base URL's: "
                       f"{state.detail} ({what})")
        self.flag(node, Kind.NETWORK, message)

    def judge_connection(self, node: ast.Call, name: str) -> None:
        host_node = self._arg(node, 0, "host")
        port_node = self._arg(node, 1, "port")
        host = self.resolver.const(host_node) if host_node is not None else NO
        port = self.resolver.const(port_node) if port_node is not None else None
        if not isinstance(host, str):
            self.flag(node, Kind.NETWORK, f"connects to a host built at run time: "
                      f"{rules.display(name)}")
            return
        if ":" in host and port is None:
            host, _, port_text = host.rpartition(":")
            port = int(port_text) if port_text.isdigit() else NO
        origin = self.urls.origin
        port = port if port is not None else (443 if "HTTPS" in name else 80)
        if host.lower() not in origin.hosts() or port != origin.port:
            self.flag(node, Kind.NETWORK, f"connects to {host}:{port}, not the base URL's host "
                      f"({origin}): {rules.display(name)}")

    def files(self, node: ast.Call, funcs: set[str]) -> None:
        for name in sorted(funcs):
            if name in rules.OPENERS:
                self.opener(node, name)
            elif name in rules.OS_WRITES:
                for position in range(rules.OS_WRITES[name]):
                    self.judge_path(node, self._arg(node, position, "path" if position == 0
                                                    else "dst"), write=True, what=name)
            elif name in rules.OS_LISTINGS:
                self.judge_path(node, self._arg(node, 0, "path"), write=False, what=name)
            elif name in rules.OS_PROBES:
                self.judge_path(node, self._arg(node, 0, "path"), write=False, what=name,
                                only_outside=True)
            elif name.startswith("shutil.") and name not in rules.SHUTIL_SAFE:
                for position, keyword in ((0, "src"), (1, "dst")):
                    argument = self._arg(node, position, keyword)
                    if argument is not None:
                        self.judge_path(node, argument, write=True, what=name)
            elif name == "logging.basicConfig":
                target = self._arg(node, -1, "filename")
                if target is not None:
                    self.judge_path(node, target, write=True, what=name)
        if isinstance(node.func, ast.Attribute):
            self.path_method(node)

    def opener(self, node: ast.Call, name: str) -> None:
        mode_position = rules.OPENERS[name]
        target = self._arg(node, 0, "file" if name != "sqlite3.connect" else "database")
        if target is None and name in ("tarfile.open",):
            target = self._arg(node, -1, "name")
        if mode_position == -1:
            write = False
        elif mode_position == -2:
            write = True
            if name == "os.open" and len(node.args) > 1:
                flags = snippet(node.args[1], 200)
                write = any(f in flags for f in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND",
                                                 "O_TRUNC"))
            if name == "sqlite3.connect" and target is not None and \
                    self.resolver.const(target) == ":memory:":
                return
        else:
            mode_node = self._arg(node, mode_position, "mode")
            mode = self.resolver.const(mode_node) if mode_node is not None else "r"
            write = not isinstance(mode, str) or any(c in mode for c in "wax+")
        if target is None:
            return
        self.judge_path(node, target, write=write, what=rules.display(name))

    def path_method(self, node: ast.Call) -> None:
        func = node.func
        assert isinstance(func, ast.Attribute)
        method = func.attr
        if method not in rules.PATH_WRITES | rules.PATH_READS | {"open"}:
            return
        receiver = func.value
        if method not in rules.PATH_ONLY_METHODS and not self._pathlike(receiver):
            return
        if method == "open":
            mode_node = self._arg(node, 0, "mode")
            mode = self.resolver.const(mode_node) if mode_node is not None else "r"
            write = not isinstance(mode, str) or any(c in mode for c in "wax+")
        else:
            write = method in rules.PATH_WRITES
        self.judge_path(node, receiver, write=write, what=f".{method}()")
        if method in ("rename", "replace", "symlink_to", "hardlink_to", "move", "copy") and \
                node.args:
            self.judge_path(node, node.args[0], write=True, what=f".{method}()")

    def _pathlike(self, node: ast.expr, depth: int = 0) -> bool:
        if depth > 6:
            return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return True
        names = self.resolver.qualnames(node)
        for name in names:
            bare = name.removesuffix("()")
            if name.endswith("()") and (bare in {"pathlib.Path", "pathlib.PurePath",
                                                 "pathlib.PosixPath", "py.path.local"}
                                        or bare.startswith("tempfile.")
                                        or bare.endswith((".joinpath", ".resolve", ".absolute",
                                                          ".with_name", ".with_suffix",
                                                          ".expanduser", ".mktemp", ".home",
                                                          ".cwd"))):
                return True
            if name in ("fixture.tmp_path", "fixture.tmpdir"):
                return True
        if isinstance(node, ast.Attribute) and node.attr in ("parent", "parents"):
            return self._pathlike(node.value, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("joinpath", "resolve", "absolute", "with_name", "with_suffix",
                                   "expanduser", "with_stem"):
            return self._pathlike(node.func.value, depth + 1)
        if isinstance(node, ast.Name):
            for binding in self.resolver.sources(node):
                if binding.kind == "value" and binding.value is not None and \
                        self._pathlike(binding.value, depth + 1):
                    return True
                if binding.kind == "param" and binding.param in ("tmp_path", "tmpdir"):
                    return True
        return False

    def judge_path(self, node: ast.Call, target: ast.expr | None, *, write: bool, what: str,
                   only_outside: bool = False) -> None:
        if target is None:
            return
        state: PathState = self.paths.path(target)
        kind = Kind.FILE_WRITE if write else Kind.FILE_READ
        verb = "writes" if write else "reads"
        name = self.resolver.const(target)
        if write and isinstance(name, str) and rules.HIJACK_FILES.match(name):
            self.flag(node, kind, f"writes {name}, which changes how Python or pytest runs: "
                      f"{rules.display(what)}")
        elif state.kind == "outside":
            self.flag(node, kind, f"{verb} {state.detail} (outside the scratch directory): "
                      f"{rules.display(what)}")
        elif state.kind == "unknown" and not only_outside:
            self.flag(node, kind, f"{verb} a path not shown to stay inside the scratch "
                      f"directory: {state.detail} ({rules.display(what)})")

"""The static-security grader: parses a generated test and reports what it must not do.

Only the `ast` of the code is read; nothing is imported or run. See `rules.py` for the names that
are dangerous by themselves, `values.py` for how URLs and paths are followed, `integrity.py` for
tests that cannot fail.
"""

from __future__ import annotations

import ast

from restbench.grading.security import rules
from restbench.grading.security.findings import Finding, Kind
from restbench.grading.security.index import ModuleIndex, build_index
from restbench.grading.security.integrity import integrity_findings
from restbench.grading.security.paths import PathJudge, PathState
from restbench.grading.security.urls import Origin, UrlJudge, UrlState
from restbench.grading.security.values import NO, Resolver, TooComplex, snippet

DEFAULT_BASE_URL = "http://localhost:8000"
MAX_NESTING = 3  # code handed to exec/eval as a literal is analysed too, this deep

_VERBS = {
    Kind.PROCESS: "starts or controls processes",
    Kind.DYNAMIC_CODE: "runs or loads code dynamically",
    Kind.SOCKET: "uses sockets or raw network access",
    Kind.NETWORK: "uses a network client other than HTTP to the base URL",
    Kind.EXIT: "ends the interpreter",
    Kind.SKIP: "skips or xfails the test",
    Kind.MONKEYPATCH: "monkeypatches",
}


def analyze(code: str, base_url: str = DEFAULT_BASE_URL) -> list[Finding]:
    """Every finding in `code`, in line order; an empty list means nothing was flagged."""
    return _analyze(code, base_url, depth=0)


def _analyze(code: str, base_url: str, depth: int) -> list[Finding]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        reason = getattr(exc, "msg", None) or str(exc)
        return [Finding(line, Kind.UNPARSEABLE, f"not valid Python: {reason}")]
    except (RecursionError, MemoryError):
        return [Finding(1, Kind.UNPARSEABLE, "too deeply nested to parse")]
    try:
        index = build_index(tree)
        checker = _Checker(index, Resolver(index), Origin.parse(base_url), base_url, depth)
        checker.run()
        findings = checker.findings + integrity_findings(index, checker.resolver)
    except (TooComplex, RecursionError):
        return [Finding(1, Kind.UNPARSEABLE, "too complex or too deeply nested to analyse")]
    unique: dict[tuple[int, Kind], Finding] = {}
    for finding in sorted(findings):  # one per line and kind: the most specific message
        kept = unique.get((finding.line, finding.kind))
        if kept is None or len(finding.message) > len(kept.message):
            unique[(finding.line, finding.kind)] = finding
    return sorted(unique.values())


class _Checker:
    def __init__(self, index: ModuleIndex, resolver: Resolver, origin: Origin, base_url: str,
                 depth: int) -> None:
        self.index = index
        self.resolver = resolver
        self.urls = UrlJudge(resolver, origin)
        self.paths = PathJudge(resolver)
        self.base_url = base_url
        self.depth = depth
        self.findings: list[Finding] = []

    def flag(self, node: ast.AST, kind: Kind, message: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 1), kind, message))

    def run(self) -> None:
        for node in ast.walk(self.index.tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                self.imports(node)
            elif isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
                self.reference(node)
            if isinstance(node, ast.Call):
                self.call(node)
                self.reference(node)

    # --- names that are dangerous wherever they appear --------------------------------------

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            module = node.module or ""
            names = [f"{module}.{alias.name}" if alias.name != "*" else module
                     for alias in node.names]
        for name in names:
            for kind in rules.kinds_of(name):
                self.flag(node, kind, f"{_VERBS[kind]}: imports {name}")
            if name in rules.ENVIRONMENT | rules.ENVIRONMENT_FUNCTIONS and \
                    isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                self.flag(node, Kind.ENVIRONMENT, "imports the environment with `import *`")

    def reference(self, node: ast.Name | ast.Attribute | ast.Subscript | ast.Call) -> None:
        if isinstance(node, ast.Attribute) and node.attr in rules.ESCAPE_ATTRIBUTES:
            self.flag(node, Kind.DYNAMIC_CODE,
                      f"reaches interpreter internals through .{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr == "skipTest":
            self.flag(node, Kind.SKIP, f"{_VERBS[Kind.SKIP]}: {snippet(node)}")
        if isinstance(getattr(node, "ctx", None), ast.Store | ast.Del) and not isinstance(
                node, ast.Subscript):
            return
        names = self.resolver.qualnames(node)
        if isinstance(node, ast.Call):  # getattr(os, "system"), __import__("os"): what they fetch
            names = {n for n in names if not n.endswith("()")}
        for name in sorted(names):
            for kind in rules.kinds_of(name):
                self.flag(node, kind, f"{_VERBS[kind]}: {rules.display(name)}")
            if name in rules.ENVIRONMENT or name in rules.ENVIRONMENT_FUNCTIONS:
                self.environment(node, name)
        parent = self.index.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node and "builtins.getattr" in names:
            self.dynamic_lookup(parent, parent.args[0] if parent.args else None,
                                parent.args[1] if len(parent.args) > 1 else None)
        if isinstance(node, ast.Subscript):
            namespace = isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__" \
                or isinstance(node.value, ast.Call) and "builtins.vars" in self.resolver.qualnames(
                    node.value.func)
            spaces = self.resolver.qualnames(node.value) & {"sys.modules", "builtins",
                                                           "builtins.globals()"}
            if namespace or spaces:
                self.dynamic_lookup(node, node.value, node.slice)

    def dynamic_lookup(self, node: ast.AST, owner: ast.expr | None,
                       attribute: ast.expr | None) -> None:
        """getattr(os, name), vars(os)[name], sys.modules[name]: a module's member chosen by a
        name built at run time hides which one is used."""
        if owner is None or attribute is None or self.resolver.const(attribute) is not NO:
            return
        owners = sorted(o for o in self.resolver.qualnames(owner)
                        if "()" not in o or o == "builtins.globals()")
        owners = [o for o in owners if not o.startswith(("fixture.", "local."))]
        if owners:
            self.flag(node, Kind.DYNAMIC_CODE, f"looks up a member of {', '.join(owners)} by "
                      "a name built at run time")

    def environment(self, node: ast.AST, name: str) -> None:
        parent = self.index.parent(node)
        key_node: ast.AST | None = None
        reading = True
        if name in rules.ENVIRONMENT_FUNCTIONS:
            if isinstance(parent, ast.Call) and parent.func is node:
                if name.endswith(("putenv", "unsetenv")):
                    self.flag(node, Kind.ENVIRONMENT, f"changes the environment: {snippet(parent)}")
                    return
                key_node = parent.args[0] if parent.args else None
            elif self._aliasing(node, parent):
                return
            else:
                self.flag(node, Kind.ENVIRONMENT, f"reads the environment: {snippet(node)}")
                return
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            grand = self.index.parent(parent)
            if parent.attr in ("get", "__getitem__") and isinstance(grand, ast.Call) \
                    and grand.func is parent:
                key_node = grand.args[0] if grand.args else None
            elif parent.attr in ("setdefault", "update", "pop", "popitem", "clear",
                                 "__setitem__", "__delitem__"):
                self.flag(node, Kind.ENVIRONMENT, f"changes the environment: {snippet(parent)}")
                return
            else:
                self.flag(node, Kind.ENVIRONMENT, f"reads the environment: {snippet(parent)}")
                return
        elif isinstance(parent, ast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, ast.Load):
                self.flag(node, Kind.ENVIRONMENT, f"changes the environment: {snippet(parent)}")
                return
            key_node = parent.slice
        elif isinstance(parent, ast.Compare) and node in parent.comparators and all(
                isinstance(op, ast.In | ast.NotIn) for op in parent.ops):
            key_node = parent.left
        elif self._aliasing(node, parent):
            return
        else:
            reading = False
        if not reading:
            self.flag(node, Kind.ENVIRONMENT,
                      f"reads the whole environment: {snippet(parent or node)}")
            return
        key = self.resolver.const(key_node) if key_node is not None else NO
        if key in rules.ALLOWED_ENVIRONMENT:
            return
        what = f"environment variable {key!r}" if isinstance(key, str) else (
            "an environment variable named at run time")
        self.flag(node, Kind.ENVIRONMENT, f"reads {what}")

    def _aliasing(self, node: ast.AST, parent: ast.AST | None) -> bool:
        """`env = os.environ`: its uses are judged where they happen."""
        return isinstance(parent, ast.Assign | ast.AnnAssign) and parent.value is node and all(
            isinstance(t, ast.Name) for t in (parent.targets if isinstance(parent, ast.Assign)
                                              else [parent.target]))

    # --- calls: network and files ----------------------------------------------------------

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

    # --- code given to exec/eval as a (decoded) literal -------------------------------------

    def nested_code(self, node: ast.Call, funcs: set[str]) -> None:
        if not funcs & {"builtins.exec", "builtins.eval", "builtins.compile"} or not node.args:
            return
        source = self.resolver.const(node.args[0])
        if isinstance(source, bytes | bytearray):
            source = bytes(source).decode("utf-8", "replace")
        if not isinstance(source, str) or self.depth >= MAX_NESTING:
            return
        for inner in _analyze(source, self.base_url, self.depth + 1):
            if inner.kind is not Kind.SKIP:
                self.flag(node, inner.kind, f"in code run by {rules.display(min(funcs))}: "
                          f"{inner.message}")

    @staticmethod
    def _arg(node: ast.Call, position: int, keyword: str) -> ast.expr | None:
        for item in node.keywords:
            if item.arg == keyword:
                return item.value
        if 0 <= position < len(node.args) and not any(
                isinstance(a, ast.Starred) for a in node.args[: position + 1]):
            return node.args[position]
        return None

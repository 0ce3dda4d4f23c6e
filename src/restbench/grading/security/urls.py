"""Where a URL points: the base URL's origin, a relative path, another host, or unknown."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from restbench.grading.security.values import MAX_DEPTH, Resolver, _arg, snippet, worst

ENV_GETTERS = frozenset({"os.environ.get", "os.getenv", "os.environb.get", "os.getenvb",
                         "posix.environ.get", "os.environ.setdefault"})
ENVIRONS = frozenset({"os.environ", "os.environb", "posix.environ", "nt.environ"})
REQUEST_CLASSES = {"requests.Request": 1, "requests.models.Request": 1, "httpx.Request": 1,
                   "urllib.request.Request": 0, "httpx.URL": 0, "yarl.URL": 0}


@dataclass(frozen=True)
class UrlState:
    """kind: "base" (the base URL's origin and a path), "open" (the origin, host part still open
    to additions), "relative", "foreign" (another host: detail), "unknown" (detail)."""

    kind: str
    detail: str = ""

    @property
    def rank(self) -> int:
        return {"base": 0, "relative": 0, "open": 1, "unknown": 2, "foreign": 3}[self.kind]


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "[::1]"})

    @classmethod
    def parse(cls, base_url: str) -> Origin:
        parts = urlsplit(base_url)
        host = (parts.hostname or "localhost").lower()
        return cls(parts.scheme or "http", host, parts.port or _default_port(parts.scheme))

    def hosts(self) -> frozenset[str]:
        return self.LOOPBACK if self.host in self.LOOPBACK else frozenset({self.host})

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def _default_port(scheme: str) -> int:
    return 443 if scheme in ("https", "wss") else 80




class UrlJudge:
    def __init__(self, values: Resolver, origin: Origin) -> None:
        self.values = values
        self.origin = origin

    def literal_url(self, text: str, complete: bool) -> UrlState:
        text = text.strip()
        match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", text)
        scheme = match.group(1).lower() if match else ""
        rest = text[match.end():] if match else text
        if scheme == "file":
            return UrlState("foreign", f"a file URL {text[:60]!r}")
        if not rest.startswith("//") and not rest.startswith("\\\\"):
            return UrlState("relative")
        authority_and_more = rest[2:]
        cut = re.search(r"[/?#]", authority_and_more)
        authority = authority_and_more[: cut.start()] if cut else authority_and_more
        closed = cut is not None or complete
        if not authority and not closed:
            return UrlState("unknown", "a URL whose host is built at run time")
        if any(c in authority for c in "@\\ \t") or not authority:
            return UrlState("foreign", f"{text[:60]!r}")
        try:
            parts = urlsplit(f"{scheme or 'http'}://{authority}")
            host, port = (parts.hostname or "").lower(), parts.port
        except ValueError:
            return UrlState("foreign", f"{text[:60]!r}")
        port = port or _default_port(scheme or self.origin.scheme)
        if host in self.origin.hosts() and port == self.origin.port:
            return UrlState("base" if cut is not None else "open")
        if not closed:
            return UrlState("foreign", f"{authority}… ({text[:60]!r})")
        return UrlState("foreign", f"{host}:{port}" if parts.port else host)

    def url(self, node: ast.expr | None, seen: frozenset[int] = frozenset()) -> UrlState:
        self.values.tick()
        if node is None or id(node) in seen or len(seen) > MAX_DEPTH:
            return UrlState("unknown", "a URL that cannot be followed")
        seen = seen | {id(node)}
        pieces = self.values.pieces(node, seen)
        first = pieces[0]
        if isinstance(first, str):
            state = self.literal_url(first, complete=len(pieces) == 1)
        else:
            state = self._url_atom(first, seen)
        for piece in pieces[1:]:
            if state.kind != "open":
                break
            if isinstance(piece, str):
                if not piece:
                    continue
                if piece[0] in "/?#":
                    state = UrlState("base")
                else:
                    state = UrlState("foreign", f"{piece[:40]!r} added to the base URL's host")
                break
            state = UrlState("base")
        return state

    def _url_atom(self, node: ast.expr, seen: frozenset[int]) -> UrlState:
        unknown = UrlState("unknown", f"{snippet(node)}")
        if isinstance(node, ast.Name):
            states = []
            for binding in self.values.sources(node):
                if binding.kind == "value" and id(binding.value) in seen:
                    continue  # `url = url.rstrip("/")`: the other assignments decide
                if binding.kind == "value":
                    states.append(self.url(binding.value, seen))
                elif binding.kind == "item":
                    elements = self.values.items(binding.value, binding.position)
                    if elements is None:
                        states.append(unknown)
                    else:
                        states.extend(self.url(e, seen) if e is not None else unknown
                                      for e in elements)
                elif binding.kind == "param":
                    values = self.values.param_values(binding) or [None]
                    states.extend(self.url(v, seen) if v is not None else unknown for v in values)
                else:
                    states.append(unknown)
            return worst(states, unknown)
        if isinstance(node, ast.Attribute):
            attrs = self.values.class_attr(node)
            if attrs is not None:
                return worst((self.url(v, seen) for v in attrs), unknown)
            return unknown
        if isinstance(node, ast.Subscript):
            if self.values.qualnames(node.value) & ENVIRONS:
                return self._env_url(node.slice, None, seen)
            element = self.values.deref(node)
            return self.url(element, seen) if element is not None else unknown
        if isinstance(node, ast.IfExp):
            return worst([self.url(node.body, seen), self.url(node.orelse, seen)], unknown)
        if isinstance(node, ast.BoolOp):
            return worst([self.url(v, seen) for v in node.values], unknown)
        if isinstance(node, ast.Call):
            return self._url_call(node, seen, unknown)
        if isinstance(node, ast.Await | ast.NamedExpr):
            return self.url(node.value, seen)
        return unknown

    def _url_call(self, node: ast.Call, seen: frozenset[int], unknown: UrlState) -> UrlState:
        returned = self.values.local_returns(node)
        if returned is not None:
            return worst((self.url(v, seen) if v is not None else unknown for v in returned),
                         unknown)
        funcs = self.values.qualnames(node.func)
        if funcs & ENV_GETTERS and node.args:
            default = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "default"), None)
            return self._env_url(node.args[0], default, seen)
        for qualname in funcs:
            position = REQUEST_CLASSES.get(qualname)
            if position is not None:
                return self.url(_arg(node, position, "url"), seen)
        if funcs & {"urllib.parse.urljoin"} and len(node.args) >= 2:
            second = self.values.const(node.args[1])
            if isinstance(second, str):
                state = self.literal_url(second, complete=True)
                if state.kind != "relative":
                    return state
            base = self.url(node.args[0], seen)
            return UrlState("base") if base.kind == "open" else base
        if isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method in ("rstrip", "strip", "lstrip", "removesuffix", "prepare", "copy",
                          "lower", "__str__", "geturl", "unsplit") or (
                    method == "prepare_request" and node.args):
                receiver = node.args[0] if method == "prepare_request" else node.func.value
                state = self.url(receiver, seen)
                return UrlState("open") if state.kind == "base" and method != "prepare" else state
        if funcs & {"builtins.str"} and node.args:
            return self.url(node.args[0], seen)
        return unknown

    def _env_url(self, key_node: ast.expr, default: ast.expr | None,
                 seen: frozenset[int]) -> UrlState:
        key = self.values.const(key_node)
        if key != "BASE_URL":
            return UrlState("unknown", f"the environment variable {key!r}"
                            if isinstance(key, str) else "an environment variable")
        if default is None:
            return UrlState("open")
        return self.url(default, seen)


"""Which dotted names are dangerous in a generated API test, by kind (fnmatch patterns).

A name matches when it is referenced at all (called, passed around, aliased or imported), so
`import subprocess as sp`, `from os import system as s`, `getattr(os, "system")`, `map(os.system,
...)` and `sys.modules["os"].system` are all caught once the resolver has named them.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase, translate
from functools import lru_cache

from restbench.grading.security.findings import Kind

REFERENCE_RULES: dict[Kind, tuple[str, ...]] = {
    Kind.PROCESS: (
        "subprocess", "subprocess.*", "_posixsubprocess*", "os.system", "os.popen", "os.exec*",
        "os.spawn*", "os.posix_spawn*", "os.fork", "os.forkpty", "os.kill", "os.killpg",
        "os.startfile", "os.wait*", "posix.system", "posix.popen", "posix.exec*", "posix.spawn*",
        "posix.fork*", "posix.kill*", "nt.system", "pty", "pty.*", "multiprocessing",
        "multiprocessing.*", "concurrent.futures.ProcessPoolExecutor*",
        "concurrent.futures.process*", "asyncio.create_subprocess_*", "asyncio.subprocess*",
        "pexpect", "pexpect.*", "sh", "sh.*", "plumbum", "plumbum.*", "commands", "commands.*",
        "popen2*", "platform.popen", "signal.signal", "signal.alarm", "signal.setitimer",
        "signal.pthread_kill", "signal.raise_signal", "resource.setrlimit", "os.setuid",
        "os.setgid", "os.setsid", "os.setpgid", "os.nice",
    ),
    Kind.DYNAMIC_CODE: (
        "builtins.eval", "builtins.exec", "builtins.compile", "builtins.__import__",
        "builtins.breakpoint", "importlib", "importlib.*", "imp", "imp.*", "runpy", "runpy.*",
        "marshal.load*", "pickle.load*", "pickle.Unpickler*", "_pickle.load*", "dill", "dill.*",
        "cloudpickle*", "shelve.open", "code", "code.*", "codeop", "codeop.*",
        "types.FunctionType*", "types.CodeType*", "types.LambdaType*", "ctypes", "ctypes.*", "cffi",
        "cffi.*", "sys._getframe", "sys.settrace", "sys.setprofile", "sys.addaudithook",
        "sys.path.append", "sys.path.insert", "sys.path.extend", "sys.meta_path*", "sys.path_hooks*",
        "pytest.main", "_pytest.config.main", "inspect.currentframe", "inspect.stack",
        "gc.get_objects", "gc.get_referrers", "builtins.globals().*", "operator.attrgetter:*",
        "pkgutil.*", "zipimport*", "sys.modules.__setitem__", "yaml.unsafe_load*",
        "yaml.UnsafeLoader", "yaml.Loader", "yaml.load_all", "jsonpickle.decode",
    ),
    Kind.SOCKET: (
        "socket", "socket.*", "_socket", "_socket.*", "ssl.wrap_socket", "ssl.SSLSocket*",
        "ssl.create_connection", "ssl.get_server_certificate", "asyncio.open_connection",
        "asyncio.open_unix_connection", "asyncio.start_server", "asyncio.start_unix_server",
        "asyncio.*.create_connection", "asyncio.*.create_datagram_endpoint", "asyncio.*.sock_*",
        "selectors.*", "dns", "dns.*", "scapy*",
    ),
    Kind.NETWORK: (
        "ftplib*", "smtplib*", "telnetlib*", "poplib*", "imaplib*", "nntplib*", "xmlrpc*",
        "http.server*", "socketserver*", "paramiko*", "pycurl*", "websocket", "websocket.*",
        "websockets", "websockets.*", "webbrowser", "webbrowser.*", "urllib3.ProxyManager*",
        "urllib3.proxy_from_url", "grpc", "grpc.*", "httplib2*", "aiosmtplib*", "ftputil*",
    ),
    Kind.EXIT: (
        "sys.exit", "builtins.exit", "builtins.quit", "os._exit", "os.abort", "posix._exit",
        "posix.abort", "pytest.exit", "_pytest.outcomes.exit", "atexit", "atexit.*",
    ),
    Kind.SKIP: (
        "pytest.skip", "pytest.skip.*", "pytest.xfail", "pytest.importorskip", "pytest.mark.skip",
        "pytest.mark.skipif", "pytest.mark.xfail", "_pytest.outcomes.skip*", "_pytest.outcomes.xfail",
        "_pytest.skipping*", "unittest.skip", "unittest.skipIf", "unittest.skipUnless",
        "unittest.expectedFailure", "unittest.SkipTest", "unittest.case.skip*",
        "unittest.case.SkipTest", "*.skipTest",
    ),
    Kind.MONKEYPATCH: (
        "fixture.monkeypatch", "fixture.monkeypatch.*", "fixture.mocker", "fixture.mocker.*",
        "pytest.MonkeyPatch*", "_pytest.monkeypatch*", "unittest.mock.patch*", "mock.patch*",
        "pytest_mock*",
    ),
}

# files that change how Python or pytest behaves when written, even inside the scratch directory
HIJACK_FILES = re.compile(r"(^|[\\/])(conftest\.py|sitecustomize\.py|usercustomize\.py|[^\\/]*\.pth|"
                          r"pytest\.ini|pyproject\.toml|setup\.cfg|tox\.ini|\.pytest_cache)$")

ENVIRONMENT = frozenset({"os.environ", "os.environb", "posix.environ", "nt.environ"})
ENVIRONMENT_FUNCTIONS = frozenset({"os.getenv", "os.getenvb", "os.putenv", "os.unsetenv",
                                   "posix.putenv", "posix.unsetenv"})
ALLOWED_ENVIRONMENT = frozenset({"BASE_URL"})  # the only variable a generated test is given

# introspection that leads from any object to builtins, frames or code objects
ESCAPE_ATTRIBUTES = frozenset({"__subclasses__", "__globals__", "__code__", "__builtins__",
                               "__closure__", "f_globals", "f_locals", "f_back", "f_builtins",
                               "gi_frame", "cr_frame", "ag_frame", "tb_frame", "__import__",
                               "__loader__", "co_code"})

# network calls: the URL's position (and keyword "url")
MODULE_CALLS: dict[str, int] = {}
for _module in ("requests", "requests.api", "httpx", "aiohttp"):
    for _method in ("get", "post", "put", "patch", "delete", "head", "options"):
        MODULE_CALLS[f"{_module}.{_method}"] = 0
    MODULE_CALLS[f"{_module}.request"] = 1
MODULE_CALLS.update({"httpx.stream": 1, "urllib3.request": 1, "urllib.request.urlopen": 0,
                     "urllib.request.urlretrieve": 0, "urllib.urlopen": 0, "urllib2.urlopen": 0,
                     "urllib.request.Request": 0, "requests.Request": 1, "httpx.Request": 1,
                     "requests.models.Request": 1, "aiohttp.ClientSession.ws_connect": 0})
CLIENTS = ("requests.Session", "requests.session", "requests.sessions.Session", "httpx.Client",
           "httpx.AsyncClient", "aiohttp.ClientSession", "urllib3.PoolManager",
           "urllib.request.build_opener", "urllib.request.OpenerDirector")
CLIENT_METHODS = {"get": 0, "post": 0, "put": 0, "patch": 0, "delete": 0, "head": 0, "options": 0,
                  "request": 1, "stream": 1, "urlopen": 1, "open": 0, "ws_connect": 0,
                  "build_request": 1}
CLIENTS_WITH_BASE_URL = frozenset({"httpx.Client", "httpx.AsyncClient", "aiohttp.ClientSession"})
CONNECTIONS = frozenset({"http.client.HTTPConnection", "http.client.HTTPSConnection",
                         "httplib.HTTPConnection", "httplib.HTTPSConnection",
                         "urllib3.HTTPConnectionPool", "urllib3.HTTPSConnectionPool",
                         "urllib3.connectionpool.HTTPConnectionPool"})
HTTP_METHOD_NAMES = frozenset(CLIENT_METHODS)

# file access
OPENERS = {"builtins.open": 1, "io.open": 1, "codecs.open": 1, "_io.open": 1, "gzip.open": 1,
           "bz2.open": 1, "lzma.open": 1, "tarfile.open": 1, "zipfile.ZipFile": 1, "io.FileIO": 1,
           "fileinput.input": -1, "tokenize.open": -1, "linecache.getline": -1,
           "linecache.getlines": -1, "os.open": -2, "dbm.open": -2, "sqlite3.connect": -2,
           "logging.FileHandler": -2, "logging.handlers.RotatingFileHandler": -2,
           "logging.handlers.TimedRotatingFileHandler": -2,
           "logging.handlers.WatchedFileHandler": -2}
# position of the mode argument, -1: always a read, -2: always a write
OS_WRITES = {"os.remove": 1, "os.unlink": 1, "os.rmdir": 1, "os.removedirs": 1, "os.rename": 2,
             "os.renames": 2, "os.replace": 2, "os.mkdir": 1, "os.makedirs": 1, "os.chmod": 1,
             "os.lchmod": 1, "os.chown": 1, "os.lchown": 1, "os.symlink": 2, "os.link": 2,
             "os.truncate": 1, "os.utime": 1, "os.mkfifo": 1, "os.mknod": 1, "os.chdir": 1,
             "os.chroot": 1, "os.chflags": 1, "os.setxattr": 1, "os.removexattr": 1,
             "pathlib.Path.write_text": 1, "pathlib.Path.write_bytes": 1}
OS_LISTINGS = frozenset({"os.listdir", "os.scandir", "os.walk", "os.readlink", "glob.glob",
                         "glob.iglob", "os.getxattr", "os.listxattr", "filecmp.cmp",
                         "pathlib.Path.read_text", "pathlib.Path.read_bytes"})
OS_PROBES = frozenset({"os.stat", "os.lstat", "os.access", "os.path.exists", "os.path.isfile",
                       "os.path.isdir", "os.path.islink", "os.path.getsize", "os.path.getmtime",
                       "os.path.lexists", "os.path.samefile"})
SHUTIL_SAFE = frozenset({"shutil.which", "shutil.get_terminal_size", "shutil.disk_usage",
                         "shutil.get_archive_formats", "shutil.get_unpack_formats", "shutil.Error",
                         "shutil.SameFileError"})
PATH_WRITES = frozenset({"write_text", "write_bytes", "touch", "mkdir", "unlink", "rmdir",
                         "symlink_to", "hardlink_to", "link_to", "chmod", "lchmod", "rename",
                         "replace", "rmtree", "remove", "ensure", "write", "mksymlinkto", "move",
                         "copy"})
PATH_READS = frozenset({"read_text", "read_bytes", "iterdir", "glob", "rglob", "listdir",
                        "readlines", "read", "read_binary", "readlink"})
PATH_ONLY_METHODS = frozenset({"write_text", "write_bytes", "read_text", "read_bytes", "touch",
                               "symlink_to", "hardlink_to", "iterdir", "rglob", "lchmod",
                               "unlink", "rmdir"})


def match(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


_COMPILED = {kind: re.compile("|".join(f"(?:{translate(p)})" for p in patterns))
             for kind, patterns in REFERENCE_RULES.items()}


@lru_cache(maxsize=4096)
def kinds_of(name: str) -> list[Kind]:
    clean = name.replace("()", "")
    return [kind for kind, pattern in _COMPILED.items()
            if pattern.match(name) or pattern.match(clean)]


def display(name: str) -> str:
    """`builtins.exec()` -> `exec`, `subprocess.run()` -> `subprocess.run`."""
    name = name.removeprefix("builtins.").removeprefix("fixture.")
    return name.removesuffix("()")

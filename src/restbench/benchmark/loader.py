"""Loading and checking a service folder; every problem becomes a one-line DataError."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from restbench.benchmark.manifest import MANIFEST_FILE, Manifest
from restbench.benchmark.models import Database, Service, ServiceData
from restbench.benchmark.openapi_doc import read_openapi_file
from restbench.benchmark.text_files import read_text
from restbench.documents import DocumentError, parse_toml
from restbench.errors import DataError, RestbenchError

# libyaml's safe loader when PyYAML was built with it (its wheels are): the same documents,
# ~10x faster (a service's requirements.yaml in 5-15 ms, not 60-160, on every command)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DATA_FILE = "requirements.yaml"


def builtin_services_root() -> Path:
    return Path(str(resources.files("restbench") / "services"))


def builtin_service_names() -> list[str]:
    root = builtin_services_root()
    return sorted(p.name for p in root.iterdir() if (p / DATA_FILE).is_file())


def resolve_services(names: Iterable[str] | None) -> list[Service]:
    """Built-in service names or paths to service folders; None means every built-in service.
    A built-in's name means the built-in even where the working folder has a service folder of
    that name (`./NAME` names the folder)."""
    chosen = list(names) if names else builtin_service_names()
    services = []
    for name in chosen:
        path = _service_folder(name)
        service = load_service(path)
        same = next((other for other in services if other.name == service.name), None)
        if same is not None and same.root.resolve() != service.root.resolve():
            # Servers, mutant copies and databases are named by service: two would mix.
            raise DataError(f"{service.data_file}: service '{service.name}' has the name of "
                            f"{same.root}; give one of them another `service:` name")
        if same is None:
            services.append(service)
    return services


def recorded_name(name: str) -> str:
    """How a run records a service it was given: a built-in by its name, a folder by its
    absolute path, which names the same folder from any working folder."""
    folder = _service_folder(name)
    return folder.name if folder.parent == builtin_services_root() else str(folder.resolve())


def _service_folder(name: str) -> Path:
    """The folder `name` names: a built-in's when it is a bare built-in name, else the path
    (or, failing that, the built-in it names with a trailing slash)."""
    builtin = builtin_services_root() / name
    is_builtin = (builtin / DATA_FILE).is_file()
    if is_builtin and "/" not in name:
        return builtin
    path = Path(name)
    if (path / DATA_FILE).is_file():
        return path
    if is_builtin:
        return builtin
    known = ", ".join(builtin_service_names())
    raise DataError(f"unknown service '{name}': not a built-in ({known}) "
                    f"and not a folder with a {DATA_FILE}")


# The lists of requirements.yaml whose entries an error names, by their key.
_ITEMS = {"requirements": "requirement", "mutants": "mutant", "benign": "benign variant"}


def _describe(error: ValidationError, raw: object) -> str:
    """The first pydantic problem, phrased with the item id it belongs to and the path of the
    field within that item (`databases[1]`, `seed.path.name`)."""
    problem = error.errors()[0]
    item, field = _locate(raw, list(problem["loc"]), missing=problem["type"] == "missing")
    message = problem["msg"].removeprefix("Value error, ")
    if problem["type"] == "missing":
        what = f"missing field '{field}'"
    elif problem["type"] == "extra_forbidden":
        what = f"unknown field '{field}'"
    elif problem["type"] == "enum":
        expected = problem.get("ctx", {}).get("expected", "")
        what = f"field '{field}': bad value {problem['input']!r} (expected {expected})"
    else:
        what = f"field '{field}': {message}" if field else message  # else: the item itself
    return f"{item}: {what}" if item else what


def _locate(raw: object, location: list[object], missing: bool) -> tuple[str, str]:
    """Walks the raw YAML along a pydantic error location: the innermost item with an id (or
    its number), and the path from that item to the field. Parts the YAML does not have (the
    union member pydantic tried, such as `str`) are left out, but for a missing field's name."""
    item = ""
    path: list[object] = []
    node = raw
    for number, part in enumerate(location):
        if not _has(node, part):
            if missing and number == len(location) - 1:
                path.append(part)
            continue
        node = node[part]  # type: ignore[index]
        path.append(part)
        if isinstance(node, dict) and isinstance(part, int) and number > 0:
            label = _ITEMS.get(str(location[number - 1]), "item")
            item = f"{label} {node['id']}" if "id" in node else f"{label} #{part + 1}"
            path = []
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return item, text


def _has(node: object, part: object) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def load_service(root: Path) -> Service:
    """Reads and checks `root/requirements.yaml`: schema, unique ids, golden files present."""
    data_file = root / DATA_FILE
    text = read_text(data_file)
    try:
        raw = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise DataError(f"{data_file}: not valid YAML{where}: "
                        f"{getattr(exc, 'problem', exc)}") from None
    if not isinstance(raw, dict):
        raise DataError(f"{data_file}: expected a mapping with 'service' and 'requirements'")
    try:
        data = ServiceData.model_validate(raw)
    except ValidationError as exc:
        raise DataError(f"{data_file}: {_describe(exc, raw)}") from None
    manifest = load_manifest(root / MANIFEST_FILE) if (root / MANIFEST_FILE).is_file() else None
    if manifest is not None:
        data = data.model_copy(update={"databases": _manifest_databases(manifest)})
    service = Service(root=root, data=data, manifest=manifest)
    _check_ids(service)
    _check_semantic_reasons(service)
    _check_golden_files(service)
    if manifest is not None:
        _check_manifest_files(service, manifest)
    elif not (service.app_dir / "main.py").is_file():
        # Without a service.toml the service is the Python package app/ (create_app in main.py).
        missing = "app/main.py" if service.app_dir.is_dir() else "folder app/"
        raise DataError(f"{root}: {missing} does not exist (a service folder holds its Python "
                        f"source in app/, or names it in a {MANIFEST_FILE})")
    return service


def load_manifest(path: Path) -> Manifest:
    """Reads and checks a service.toml; every problem is one line naming the table and key."""
    text = read_text(path)
    try:
        raw = parse_toml(text)
    except DocumentError as exc:
        raise DataError(f"{path}: {exc}") from None
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        if problem["type"] == "missing":
            what = "missing"
        elif problem["type"] == "extra_forbidden":
            what = "unknown key"
        else:
            what = problem["msg"].removeprefix("Value error, ")
        raise DataError(f"{path}: [{where}]: {what}") from None


def _manifest_databases(manifest: Manifest) -> list[Database]:
    if manifest.own_storage:  # keeps its state itself: runs whatever database is chosen
        return list(Database)
    return [Database.SQLITE if name == "sqlite" else Database.POSTGRESQL
            for name in manifest.storage.databases]


def _check_manifest_files(service: Service, manifest: Manifest) -> None:
    where = service.root / MANIFEST_FILE
    if not service.app_dir.is_dir():
        raise DataError(f"{where}: [source.tree]: folder {manifest.source.tree} does not exist")
    if manifest.openapi.file is not None:
        if not (service.root / manifest.openapi.file).is_file():
            raise DataError(f"{where}: [openapi.file]: {manifest.openapi.file} does not exist")
        try:
            read_openapi_file(service)
        except RestbenchError as exc:
            raise DataError(str(exc)) from None


def _check_ids(service: Service) -> None:
    seen: set[str] = set()
    for requirement in service.requirements:
        if requirement.id in seen:
            raise DataError(f"{service.data_file}: requirement {requirement.id}: duplicate id")
        seen.add(requirement.id)
    for requirement in service.requirements:
        for mutant in requirement.mutants:
            if not mutant.id.startswith(f"{requirement.id}-"):
                raise DataError(f"{service.data_file}: requirement {requirement.id}: mutant "
                                f"{mutant.id}: its id must start with {requirement.id}- (a "
                                "mutant belongs to the requirement it violates)")
    for item in [*service.mutants(), *service.data.benign]:
        if item.id in seen:
            raise DataError(f"{service.data_file}: mutant {item.id}: duplicate id")
        seen.add(item.id)


def _check_semantic_reasons(service: Service) -> None:
    """A requirement says why it has no semantic mutant exactly when it has none."""
    for requirement in service.requirements:
        has_semantic = requirement.has_semantic_mutant()
        if not has_semantic and requirement.no_semantic_reason is None:
            raise DataError(f"{service.data_file}: requirement {requirement.id}: no mutant of kind "
                            f"'semantic' and no 'no_semantic_reason' saying why")
        if has_semantic and requirement.no_semantic_reason is not None:
            raise DataError(f"{service.data_file}: requirement {requirement.id}: has a semantic "
                            f"mutant, so 'no_semantic_reason' must be left out")


def _check_golden_files(service: Service) -> None:
    root = service.root.resolve()
    for requirement in service.requirements:
        path = service.golden_path(requirement)
        if not path.resolve().is_relative_to(root):
            # a golden test is part of the service: it is copied and reported as the service's
            raise DataError(f"{service.data_file}: requirement {requirement.id}: golden test "
                            f"{requirement.golden} is outside the service folder")
        where = f"{service.data_file}: requirement {requirement.id}: golden test"
        if path.is_dir():
            raise DataError(f"{where} {requirement.golden} is a folder, not a file")
        if not path.is_file():
            raise DataError(f"{where} {requirement.golden} does not exist")
        if path.suffix != ".py":
            # validate and run hand it to pytest whatever the service's language
            raise DataError(f"{where} {requirement.golden} is not a pytest file (.py)")

"""Exact-once find/replace edits applied to a copy of a service's app package."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from restbench.benchmark.models import BenignVariant, Edit, Mutant, Service
from restbench.errors import MutationError
from restbench.mutation.diff import apply_diff

ORIGINAL = "original"


@dataclass(frozen=True)
class Implementation:
    """One runnable version of a service: the original, a mutant or a benign variant."""

    service: Service
    id: str = ORIGINAL
    edit: Edit | None = None

    @property
    def kind(self) -> str:
        if isinstance(self.edit, Mutant):
            return "mutant"
        if isinstance(self.edit, BenignVariant):
            return "benign"
        return ORIGINAL

    def fingerprint(self) -> str:
        """Changes whenever the served code would change: the service source and the edit."""
        digest = hashlib.sha256(_source_digest(self.service.app_dir,
                                               self.service.manifest is not None).encode())
        if self.edit is not None:
            # exclude_none: fingerprints of find/replace edits stay as before diffs existed
            digest.update(self.edit.model_dump_json(exclude_none=True).encode())
        return digest.hexdigest()[:16]


def implementations_of(service: Service) -> dict[str, Implementation]:
    found = {ORIGINAL: Implementation(service)}
    for edit in [*service.mutants(), *service.data.benign]:
        found[edit.id] = Implementation(service, edit.id, edit)
    return found


_digest_cache: dict[Path, str] = {}


def _source_digest(app_dir: Path, every_file: bool = False) -> str:
    if app_dir not in _digest_cache:
        digest = hashlib.sha256()
        files = (p for p in app_dir.rglob("*") if p.is_file()) if every_file \
            else app_dir.rglob("*.py")
        for path in sorted(files):
            digest.update(str(path.relative_to(app_dir)).encode())
            digest.update(path.read_bytes())
        _digest_cache[app_dir] = digest.hexdigest()
    return _digest_cache[app_dir]


def apply_edit(text: str, edit: Edit, *, item: str, where: str) -> str:
    """Replaces the edit's find text, which must occur exactly once in `text` (or applies its
    unified diff, each hunk of which must match exactly once)."""
    if edit.diff is not None:
        return apply_diff(text, edit.diff, item=item, where=where, file=edit.file)
    assert edit.find is not None and edit.replace is not None
    count = text.count(edit.find)
    if count != 1:
        found = "does not occur" if count == 0 else f"occurs {count} times"
        raise MutationError(f"{where}: {item}: find text {found} in {edit.file} "
                            f"(it must occur exactly once)")
    if edit.replace == edit.find:
        raise MutationError(f"{where}: {item}: replace text equals find text in {edit.file}")
    return text.replace(edit.find, edit.replace)


def _target(service: Service, edit: Edit, item: str) -> Path:
    path = (service.root / edit.file).resolve()
    app_dir = service.app_dir.resolve()
    if app_dir not in path.parents:
        tree = service.manifest.source.tree if service.manifest else "app"
        raise MutationError(f"{service.data_file}: {item}: file {edit.file} is not inside "
                            f"{tree}/")
    if not path.is_file():
        raise MutationError(f"{service.data_file}: {item}: file {edit.file} does not exist")
    return path


def check_edits(service: Service) -> None:
    """Checks that every mutant and benign variant applies; raises on the first that does not."""
    for implementation in implementations_of(service).values():
        if implementation.edit is not None:
            edited_text(implementation)


def broken_edits(service: Service) -> dict[str, str]:
    """The mutants and benign variants whose edit does not apply, by id, with why."""
    broken = {}
    for implementation in implementations_of(service).values():
        if implementation.edit is not None:
            try:
                edited_text(implementation)
            except MutationError as exc:
                broken[implementation.id] = str(exc)
    return broken


def edit_problems(service: Service) -> list[str]:
    """Every mutant's and benign variant's edit that does not apply, with why."""
    return list(broken_edits(service).values())


def edited_text(implementation: Implementation) -> tuple[Path, str]:
    service, edit = implementation.service, implementation.edit
    assert edit is not None
    item = f"{implementation.kind} {implementation.id}"
    path = _target(service, edit, item)
    text = apply_edit(path.read_text(encoding="utf-8"), edit, item=item,
                      where=str(service.data_file))
    return path.relative_to(service.root.resolve()), text


def materialize(implementation: Implementation, destination: Path) -> Path:
    """Copies the service's app package into `destination` and applies the edit.

    Returns the folder to put first on sys.path so that `import app` loads this implementation.
    """
    service = implementation.service
    destination.mkdir(parents=True, exist_ok=True)
    tree = service.app_dir.relative_to(service.root)
    shutil.copytree(service.app_dir, destination / tree, dirs_exist_ok=True, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if implementation.edit is not None:
        relative, text = edited_text(implementation)
        (destination / relative).write_text(text, encoding="utf-8")
    return destination

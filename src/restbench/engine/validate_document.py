"""What `validate` checks of a service's OpenAPI document: generators see the document and the
requirement's text, nothing else, so it must name every operation the requirements use, and it
should declare the answers the service gives.

The document comes from a server of the original, as `run` reads it; the answers are those the
golden tests got on the original (their recorded exchanges).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from restbench.benchmark.models import Service
from restbench.engine.backend import ExecutionBackend, LocalBackend
from restbench.errors import RestbenchError, ServiceStartError
from restbench.mutation import implementations_of
from restbench.mutation.apply import ORIGINAL
from restbench.scratch import scratch_folder
from restbench.serving import ServerPool
from restbench.serving.databases import DatabaseChoice


@dataclass
class DocumentFindings:
    problems: list[str] = field(default_factory=list)  # the service's own
    by_requirement: dict[str, list[str]] = field(default_factory=dict)
    # Answers the document does not declare: worth fixing, not a reason to fail (the scores
    # are of tests against the service, not against the document)
    notes: list[str] = field(default_factory=list)


async def original_document(service: Service, backend: ExecutionBackend,
                            database: DatabaseChoice) -> dict[str, Any] | str | None:
    """The OpenAPI document of the service's original; why it could not be read; or None where
    the original does not start (its executions report that)."""
    from restbench.benchmark.openapi_doc import service_openapi  # httpx: only when needed

    async with contextlib.AsyncExitStack() as stack:
        if isinstance(backend, LocalBackend):
            pool = backend.pool
        else:  # a cluster's servers are on its nodes: the document comes from one here
            scratch = stack.enter_context(scratch_folder("restbench-validate-document-"))
            pool = await stack.enter_async_context(ServerPool(Path(scratch), database))
        try:
            server = await pool.start(implementations_of(service)[ORIGINAL])
        except ServiceStartError:
            return None
        try:
            return await service_openapi(service, server.base_url)
        except RestbenchError as exc:
            return str(exc)
        finally:
            await pool.stop(server)


def check_document(service: Service, document: dict[str, Any] | str | None,
                   exchanges: Mapping[str, Sequence[dict[str, Any]]]) -> DocumentFindings:
    """Operations the requirements (or the `auth` block) name that `document` lacks, and the
    golden tests' answers on the original (`exchanges`, by requirement) that it does not
    declare."""
    from restbench.generators.baselines.openapi import missing_operations

    findings = DocumentFindings()
    if document is None:
        return findings
    if isinstance(document, str):
        findings.problems.append(document)
        return findings
    for missing in missing_operations(service, document):
        if missing.requirement is None:
            findings.problems.append(missing.describe(service.data_file))
        else:
            findings.by_requirement.setdefault(missing.requirement, []).append(
                f"{missing.requirement}: operation {missing.operation!r} is not in the "
                f"service's OpenAPI document ({service.data_file})")
    findings.notes = _undeclared_answers(document, exchanges)
    return findings


def _undeclared_answers(document: dict[str, Any],
                        exchanges: Mapping[str, Sequence[dict[str, Any]]]) -> list[str]:
    """One note per operation and status the document does not declare (and per request that
    no operation answers), naming the requirements whose golden tests met it."""
    from restbench.generators.baselines.openapi import declares_status, operation_at

    seen: dict[str, list[str]] = {}
    for requirement, calls in exchanges.items():
        for call in calls:
            method, path = str(call.get("method", "")), str(call.get("url", "")).split("?")[0]
            status = call.get("status")
            if not isinstance(status, int):
                continue
            operation = operation_at(document, method, path)
            if operation is None:
                finding = f"{method} {path} is no operation of the OpenAPI document"
            elif declares_status(operation, status):
                continue
            else:
                finding = (f"{operation.method} {operation.path} answered {status}, which the "
                           "OpenAPI document does not declare for it")
            named = seen.setdefault(finding, [])
            if requirement not in named:
                named.append(requirement)
    return [f"{finding} (golden tests of {', '.join(requirements)} on the original; generators "
            "see only the document, and the no-LLM baselines count such an answer as a failure)"
            for finding, requirements in seen.items()]

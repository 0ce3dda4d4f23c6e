"""Reading a running service's OpenAPI document, with a clear error for each way it goes wrong;
matching a request's path to the document's path templates."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from restbench.documents import parse_json
from restbench.errors import RestbenchError

if TYPE_CHECKING:
    from restbench.benchmark.models import Service

FETCH_TIMEOUT_S = 30.0
TIMEOUT_ENV = "RESTBENCH_TEST_OPENAPI_TIMEOUT_S"  # restbench's own tests: not 30 s of waiting


async def service_openapi(service: Service, base_url: str) -> dict[str, Any]:
    """The OpenAPI document of a running service: where its manifest says (a file or a route),
    else GET /openapi.json."""
    manifest = service.manifest
    if manifest is None or manifest.openapi.url is not None:
        path = manifest.openapi.url.split(" ", 1)[1] if manifest and manifest.openapi.url \
            else "/openapi.json"
        return await fetch_openapi(base_url, service.name, path=path)
    return read_openapi_file(service)


def read_openapi_file(service: Service) -> dict[str, Any]:
    """The OpenAPI document of a service whose manifest names a file (a one-line RestbenchError
    when it is not a JSON document with operations)."""
    assert service.manifest is not None and service.manifest.openapi.file is not None
    where = service.root / service.manifest.openapi.file
    try:
        document = parse_json(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RestbenchError(f"{where}: not a readable JSON OpenAPI document: {exc}") from None
    return _checked(document, service.name, str(where))


async def fetch_openapi(base_url: str, service: str,
                        timeout_s: float | None = None, *,
                        path: str = "/openapi.json") -> dict[str, Any]:
    """GET {base_url}/openapi.json: a document with at least one operation, else a one-line
    RestbenchError naming the service (no answer in time, an error status, not JSON, empty)."""
    import httpx  # here: reading a service's document file needs none of it

    url = f"{base_url}{path}"
    timeout_s = timeout_s or float(os.environ.get(TIMEOUT_ENV) or FETCH_TIMEOUT_S)
    try:
        async with httpx.AsyncClient(trust_env=False, timeout=timeout_s) as client:
            response = await client.get(url)
    except httpx.TimeoutException:
        raise RestbenchError(f"service {service}: GET {path} gave no answer within "
                             f"{timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise RestbenchError(f"service {service}: GET {path} failed: "
                             f"{type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise RestbenchError(f"service {service}: GET {path} answered "
                             f"{response.status_code}")
    try:
        document = parse_json(response.text)
    except ValueError as exc:
        raise RestbenchError(f"service {service}: GET {path} is not JSON: {exc}") from None
    return _checked(document, service, f"GET {path}")


def _checked(document: Any, service: str, where: str) -> dict[str, Any]:
    if not isinstance(document, dict) or not isinstance(document.get("paths"), dict) \
            or not any(isinstance(item, dict) and item for item in document["paths"].values()):
        raise RestbenchError(f"service {service}: {where} has no operations (an empty "
                             "or malformed OpenAPI document); generators need the API's contract")
    return document


def path_pattern(template: str) -> re.Pattern[str]:
    """The paths a template such as "/notes/{id}" stands for, each parameter a group (`p1`,
    `p3`, ...: named after its place among the template's parts)."""
    parts = re.split(r"(\{[^}/]+\})", template)
    regex = "".join(f"(?P<p{i}>[^/]+)" if part.startswith("{") else re.escape(part)
                    for i, part in enumerate(parts))
    return re.compile(f"^{regex}$")

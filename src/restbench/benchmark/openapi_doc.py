"""Reading a running service's OpenAPI document, with a clear error for each way it goes wrong."""

from __future__ import annotations

import os
from typing import Any

import httpx

from restbench.errors import RestbenchError

FETCH_TIMEOUT_S = 30.0
TIMEOUT_ENV = "RESTBENCH_TEST_OPENAPI_TIMEOUT_S"  # restbench's own tests: not 30 s of waiting


async def fetch_openapi(base_url: str, service: str,
                        timeout_s: float | None = None) -> dict[str, Any]:
    """GET {base_url}/openapi.json: a document with at least one operation, else a one-line
    RestbenchError naming the service (no answer in time, an error status, not JSON, empty)."""
    url = f"{base_url}/openapi.json"
    timeout_s = timeout_s or float(os.environ.get(TIMEOUT_ENV) or FETCH_TIMEOUT_S)
    try:
        async with httpx.AsyncClient(trust_env=False, timeout=timeout_s) as client:
            response = await client.get(url)
    except httpx.TimeoutException:
        raise RestbenchError(f"service {service}: GET /openapi.json gave no answer within "
                             f"{timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise RestbenchError(f"service {service}: GET /openapi.json failed: "
                             f"{type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise RestbenchError(f"service {service}: GET /openapi.json answered "
                             f"{response.status_code}")
    try:
        document = response.json()
    except ValueError:
        raise RestbenchError(f"service {service}: GET /openapi.json is not JSON") from None
    if not isinstance(document, dict) or not isinstance(document.get("paths"), dict) \
            or not any(isinstance(item, dict) and item for item in document["paths"].values()):
        raise RestbenchError(f"service {service}: GET /openapi.json has no operations (an empty "
                             "or malformed OpenAPI document); generators need the API's contract")
    return document

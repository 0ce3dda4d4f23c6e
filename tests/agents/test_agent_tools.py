"""Tools from the built-in services' OpenAPI documents, the login rule, and the way back from HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import unquote, urlencode

import httpx
import pytest

from restbench.agents.session import LiveSession
from restbench.agents.tools import (
    FORM_TYPES,
    Tool,
    build_request,
    call_from_exchange,
    calls_from_exchanges,
    normalize_args,
    tool_name,
    tools_from_openapi,
)

SERVICES = ("todo", "conduit", "fullstack")


def test_the_naming_rule() -> None:
    assert tool_name("digital_sales", "get_my_accounts_my_accounts_get") == \
        "digital_sales_get_my_accounts_my_accounts_get"
    assert tool_name("fullstack", "login-login_access_token") == \
        "fullstack_login_login_access_token"
    assert tool_name("conduit", "listArticles") == "conduit_listarticles"
    assert tool_name("My Service", "--Get__Items--") == "my_service_get_items"


@pytest.fixture(scope="module")
def documents(background_services: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = {}
    for name in SERVICES:
        url = background_services["get"](name).server.base_url
        found[name] = httpx.get(f"{url}/openapi.json", timeout=30).json()
    return found


def _tools(documents: dict[str, dict[str, Any]], service: str) -> dict[str, Tool]:
    return {tool.name: tool for tool in tools_from_openapi(service, documents[service])}


def test_one_tool_per_operation_with_resolved_parameter_schemas(documents: dict) -> None:
    for service in SERVICES:
        operations = sum(1 for item in documents[service]["paths"].values() for method in item
                         if method in ("get", "post", "put", "patch", "delete"))
        tools = tools_from_openapi(service, documents[service])
        assert len(tools) == len({t.name for t in tools}) == operations
        assert all(t.name.startswith(f"{service}_") for t in tools)
        assert "$ref" not in json.dumps([t.parameters for t in tools])
    todo = _tools(documents, "todo")
    assert todo["todo_create_todo_todos_post"].parameters["required"] == ["title"]
    # the body's `id` clashes with the path's `id`: the body goes under `body`
    update = todo["todo_update_todo_todos_id_put"].parameters
    assert update["required"] == ["id", "body"]
    assert set(update["properties"]["body"]["properties"]) == {"id", "title", "isComplete"}
    article = _tools(documents, "conduit")["conduit_createarticle"].parameters
    assert article["properties"]["article"]["required"] == ["title", "description", "body"]
    login = _tools(documents, "fullstack")["fullstack_login_login_access_token"]
    assert login.body_media_type == "application/x-www-form-urlencoded"
    assert login.parameters["required"] == ["username", "password"]
    assert _tools(documents, "fullstack")["fullstack_items_read_items"].parameters[
        "properties"]["limit"]["type"] == "integer"


def _sample(schema: dict[str, Any]) -> Any:
    options = [schema, *schema.get("anyOf", [])]
    kind = next((o.get("type") for o in options if o.get("type") not in (None, "null")), None)
    return {"integer": 7, "number": 2.5, "boolean": True, "array": ["a", "b"],
            "object": {"k": "v"}}.get(kind, "some text")


def _exchange(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    request = build_request(tool, args)
    # the service records the path as ASGI gives it: percent-decoded
    url = unquote(request.path) + (f"?{urlencode(request.query)}" if request.query else "")
    body = urlencode(request.form_body) if request.form_body is not None else \
        json.dumps(request.json_body) if request.has_json_body else ""
    return {"method": request.method, "url": url, "status": 200, "request_body": body}


def test_every_tool_call_maps_back_from_its_http_request(documents: dict) -> None:
    for service in SERVICES:
        tools = tools_from_openapi(service, documents[service])
        for tool in tools:
            args = {name: _sample(schema)
                    for name, schema in tool.parameters["properties"].items()
                    if not (tool.param(name) and tool.param(name).location == "header")}
            if tool.body_media_type in FORM_TYPES:
                args = {k: str(v) for k, v in args.items()}
            recorded = call_from_exchange(tools, _exchange(tool, args))
            assert (recorded.name, recorded.args) == (tool.name, normalize_args(tool, args)), \
                tool.name


def test_literal_paths_win_and_unknown_requests_keep_their_path(documents: dict) -> None:
    tools = tools_from_openapi("conduit", documents["conduit"])
    feed = call_from_exchange(tools, {"method": "GET", "url": "/api/articles/feed?limit=5"})
    assert (feed.name, feed.args) == ("conduit_feed", {"limit": 5})
    other = call_from_exchange(tools, {"method": "GET", "url": "/nowhere", "status": 404})
    assert (other.name, other.args, other.status) == ("GET /nowhere", {}, 404)


LOGINS = {
    "todo": ("todo_login_users_login_post",
             {"email": "alice@example.com", "password": "Alice123!"},
             "todo_get_info_users_manage_info_get", "alice@example.com"),
    "conduit": ("conduit_login",
                {"user": {"email": "alice@conduit.test", "password": "alice-password"}},
                "conduit_currentuser", "alice"),
    "fullstack": ("fullstack_login_login_access_token",
                  {"username": "alice@example.com", "password": "alicepass123"},
                  "fullstack_users_read_user_me", "Alice Martin"),
}


@pytest.mark.parametrize("service", SERVICES)
def test_the_login_rule_on_each_security_scheme(service: str, documents: dict,
                                                background_services: dict[str, Any]) -> None:
    running = background_services["get"](service)
    base_url = running.reset()
    login, credentials, protected, fact = LOGINS[service]
    tools = tools_from_openapi(service, documents[service])

    async def conversation() -> list[Any]:
        async with LiveSession(base_url, tools, documents[service]) as session:
            before = await session.call(protected, {})
            logged_in = await session.call(login, credentials)
            after = await session.call(protected, {})
            missing = await session.call("no_such_tool", {})
            return [before, logged_in, after, missing, session.requests_sent]

    before, logged_in, after, missing, sent = asyncio.run(conversation())
    assert before.status == 401 and logged_in.status == 200 and after.status == 200
    assert fact in json.dumps(after.body)
    assert missing.status is None and "unknown tool" in str(missing.error) and sent == 3
    recorded = calls_from_exchanges(tools, running._call(running.server.exchanges()))
    assert [(c.name, c.status) for c in recorded] == [(protected, 401), (login, 200),
                                                      (protected, 200)]
    assert recorded[1].args == credentials


def test_a_body_that_clashes_with_a_parameter_may_be_given_flat(documents: dict) -> None:
    tools = tools_from_openapi("todo", documents["todo"])
    update = next(t for t in tools if t.name == "todo_update_todo_todos_id_put")
    flat = {"id": "1", "title": "Buy oat milk", "isComplete": True}
    wrapped = {"id": 1, "body": {"id": 1, "title": "Buy oat milk", "isComplete": True}}
    assert normalize_args(update, flat) == wrapped
    request = build_request(update, flat)
    assert (request.path, request.json_body, request.query) == ("/todos/1", wrapped["body"], [])
    assert call_from_exchange(tools, _exchange(update, flat)).args == wrapped
    # a path parameter alone is not a body
    assert normalize_args(update, {"id": 1}) == {"id": 1}

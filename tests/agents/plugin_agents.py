"""Third-party style agents for the plugin tests (loaded by module:attribute in a subprocess)."""

from __future__ import annotations

import asyncio

import httpx

from restbench.agents import AgentAnswer, AgentTask, ClaimedCall


class DirectHttpAgent:
    """A plain (sync) agent: logs in through a tool, then lists with its own HTTP client, and
    claims a call it never made. Only what the service saw may count."""

    name = "direct-http"

    def run(self, task: AgentTask) -> AgentAnswer:
        login = task.tool("todo_login_users_login_post").call_sync(
            {"email": "alice@example.com", "password": "Alice123!"})
        token = login.body["accessToken"]
        with httpx.Client(base_url=task.base_url, trust_env=False) as client:
            todos = client.get("/todos", headers={"Authorization": f"Bearer {token}"}).json()
        titles = " and ".join(todo["title"] for todo in todos)
        return AgentAnswer(f"Alice has {titles}.",
                           tool_calls=(ClaimedCall("todo_delete_todo_todos_id_delete", {"id": 1}),),
                           steps=2)


class HangingAgent:
    """Logs in, then never answers: the case must fail on its time limit, keeping the login."""

    name = "hanging"

    async def run(self, task: AgentTask) -> AgentAnswer:
        await task.tool("todo_login_users_login_post").call(
            {"email": "alice@example.com", "password": "Alice123!"})
        await asyncio.sleep(3600)
        return AgentAnswer("never")


class ConstructorRaises:
    """An agent whose constructor fails (its model not configured, say)."""

    name = "constructor-raises"

    def __init__(self) -> None:
        raise RuntimeError("no model configured")

    def run(self, task: AgentTask) -> AgentAnswer:
        return AgentAnswer("never")


class LedgerDepositAgent:
    """Logs in as alice and makes one deposit, shaped by the intent's first word: `bare` sends
    no Idempotency-Key, `lower` names it in lower case, `foreign` deposits into bob's account."""

    name = "ledger-deposit"

    async def run(self, task: AgentTask) -> AgentAnswer:
        await task.tool("ledger_login").call({"username": "alice", "password": "alice-pass-1"})
        shape = task.intent.split()[0]
        args: dict[str, object] = {"id": "acc_101" if shape == "foreign" else "acc_003",
                                   "amount": 5000}
        if shape != "bare":
            args["idempotency-key" if shape == "lower" else "Idempotency-Key"] = "agent-deposit-1"
        result = await task.tool("ledger_deposit").call(args)
        return AgentAnswer(f"deposit answered {result.status}", steps=2)

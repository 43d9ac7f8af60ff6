#!/usr/bin/env python3
"""MCP's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) through
the official Python SDK (`mcp` on PyPI, 2.3.0), against the bridge in front
of a fake-unity serving bridge/tests/clients/slow-run-tests.toml (run-tests
12 s longer than usual).

    python3 tasks_python.py --bridge PATH/unity-mcp-bridge --project DIR

The SDK has no tasks runtime of its own; it has a generic extension API
(`ClientExtension` claiming a `resultType`), with which the extension is
the ~50 lines below: a `tools/call` answered with `resultType: "task"` is
finished by polling `tasks/get` at the task's `pollIntervalMs`. With a 5 s
tool timeout on the client, pinned to 2026-07-28:

- the slow `run-tests` comes back through its task (long after 5 s);
- the same call by the same SDK without the extension times out at 5 s
  (the contrast: a plain tools/call cannot outlive the client's timeout);
- `tasks/cancel` ends a long call `cancelled`;
- a quick `get-logs` is a plain result.

Exit status 0 when every check passed; the last line is a summary.
"""
import argparse
import asyncio
import json
import re
import sys
import time
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Request, RequestParams, Result

EXTENSION = "io.modelcontextprotocol/tasks"
TIMEOUT = 5  # the client's tool timeout, seconds
CHECKS = {"passed": 0, "failed": 0}


def check(condition, what):
    if condition:
        CHECKS["passed"] += 1
    else:
        CHECKS["failed"] += 1
        print("FAIL:", what, file=sys.stderr)


# The extension's wire shapes (spec "tasks", 2026-07-28).
class CreateTaskResult(Result):
    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class TaskParams(RequestParams):
    task_id: str


class GetTaskRequest(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTaskRequest(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class GetTaskResult(Result):
    model_config = {"extra": "allow"}
    result_type: Literal["complete"] = "complete"
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class AckResult(Result):
    result_type: Literal["complete"] = "complete"


class Tasks(ClientExtension):
    """The requester: polls a task to its end; counts what it did."""

    identifier = EXTENSION

    def __init__(self):
        self.handles = []  # every CreateTaskResult received
        self.polls = 0  # tasks/get sent
        self.messages = []  # the statusMessages seen

    async def get(self, session, task_id):
        self.polls += 1
        got = await session.send_request(GetTaskRequest(params=TaskParams(task_id=task_id)), GetTaskResult)
        self.messages.append(got.status_message)
        return got

    async def resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        self.handles.append(created)
        wait = (created.poll_interval_ms or 1000) / 1000
        while True:
            await anyio.sleep(wait)
            got = await self.get(ctx.session, created.task_id)
            wait = (got.poll_interval_ms or 1000) / 1000
            if got.status == "completed":
                return CallToolResult.model_validate(got.result, by_name=False)
            if got.status in ("failed", "cancelled"):
                raise RuntimeError("task %s: %s %s" % (got.status, got.status_message, got.error))

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]


def params(bridge, project):
    return StdioServerParameters(command=bridge, args=["--project", project, "--log-level", "warn"])


async def with_tasks(bridge, project, figures):
    tasks = Tasks()
    async with Client(params(bridge, project), mode="2026-07-28", extensions=[tasks],
                      read_timeout_seconds=TIMEOUT) as client:
        check(client.protocol_version == "2026-07-28", "protocol version %s" % client.protocol_version)
        # Pinned, the SDK adopts a result of its own rather than asking: ask.
        discovered = await client.session.send_discover("2026-07-28")
        extensions = discovered.get("capabilities", {}).get("extensions") or {}
        check(extensions.get(EXTENSION) == {}, "server/discover declares the extension: %s" % extensions)
        await client.list_tools()

        # (d) A quick call is a plain result, never a task.
        logs = await client.session.call_tool("get-logs", {"LogType": "Warning"}, allow_claimed=True)
        check(isinstance(logs, CallToolResult) and not logs.is_error
              and (logs.structured_content or {}).get("TotalCount") == 2, "get-logs is a plain result: %r" % (logs,))

        # compile: the handle as the SDK hands it over (allow_claimed), then polled here.
        handle = await client.session.call_tool("compile", {}, allow_claimed=True)
        check(isinstance(handle, CreateTaskResult), "compile is answered with a task: %r" % (handle,))
        if isinstance(handle, CreateTaskResult):
            check(handle.status == "working" and handle.ttl_ms is None and handle.poll_interval_ms == 1000,
                  "compile's task: %r" % (handle,))
            for _ in range(60):
                got = await tasks.get(client.session, handle.task_id)
                if got.status != "working":
                    break
                await anyio.sleep((got.poll_interval_ms or 1000) / 1000)
            check(got.status == "completed" and got.task_id == handle.task_id, "compile's task ended %s" % got.status)
            result = CallToolResult.model_validate(got.result or {}, by_name=False)
            check(not result.is_error and (result.structured_content or {}).get("ErrorCount") == 0,
                  "compile's result: %s" % json.dumps(got.result)[:300])
            check(isinstance(got.ttl_ms, int) and got.ttl_ms > 0, "an ended task says how long it is kept: %s" % got.ttl_ms)

        # (a) The slow run-tests (12 s more, against a 5 s timeout), transparently through its task.
        polls_before, started = tasks.polls, time.monotonic()
        tests = await client.call_tool("run-tests", {})
        took = time.monotonic() - started
        polls = tasks.polls - polls_before
        figures["task"] = (took, polls)
        check(len(tasks.handles) == 1 and tasks.handles[0].result_type == "task",
              "run-tests came as a CreateTaskResult (%d handles)" % len(tasks.handles))
        check((tests.structured_content or {}).get("TestCount") == 9, "run-tests through its task: %s"
              % json.dumps(tests.structured_content)[:300])
        check(tests.is_error and (tests.structured_content or {}).get("FailedCount") == 1,
              "the fixture's failing test makes it an error result (a completed task)")
        check(took > TIMEOUT * 2 and polls >= 10, "run-tests as a task took %.1f s, %d polls" % (took, polls))
        # The Editor's progress, as the task's statusMessage (no progress notifications on tasks).
        check(any(re.fullmatch(r"\d+: Working \(\d+ s\)", m or "") for m in tasks.messages),
              "progress as statusMessage: %s" % tasks.messages[-polls:])

        # (c) tasks/cancel ends a long call cancelled.
        handle = await client.session.call_tool("run-tests", {}, allow_claimed=True)
        check(isinstance(handle, CreateTaskResult), "run-tests is answered with a task: %r" % (handle,))
        if isinstance(handle, CreateTaskResult):
            await anyio.sleep(1)
            ack = await client.session.send_request(CancelTaskRequest(params=TaskParams(task_id=handle.task_id)), AckResult)
            check(ack.result_type == "complete", "tasks/cancel acknowledged")
            cancelled_at = time.monotonic()
            for _ in range(30):
                got = await tasks.get(client.session, handle.task_id)
                if got.status != "working":
                    break
                await anyio.sleep(0.2)
            figures["cancel"] = time.monotonic() - cancelled_at
            check(got.status == "cancelled" and got.result is None, "the cancelled task: %s, %s" % (got.status, got.status_message))

        # An unknown task is invalid params (-32602).
        try:
            await tasks.get(client.session, "00000000-0000-4000-8000-000000000000")
            check(False, "tasks/get of an unknown task must be an error")
        except MCPError as e:
            check(e.code == -32602, "tasks/get of an unknown task: %s %s" % (e.code, e))


async def without_tasks(bridge, project, figures):
    # (b) The same call by the same SDK without the extension: no task, the client's 5 s timeout.
    async with Client(params(bridge, project), mode="2026-07-28", read_timeout_seconds=TIMEOUT) as client:
        await client.list_tools()
        started = time.monotonic()
        try:
            result = await client.call_tool("run-tests", {})
            check(False, "a plain run-tests must time out at the client's %d s: %r" % (TIMEOUT, result))
        except MCPError as e:
            figures["plain"] = (time.monotonic() - started, str(e))
            check(e.code == -32001, "the plain call timed out: %s %s" % (e.code, e))
        took = time.monotonic() - started
        check(TIMEOUT - 0.5 < took < TIMEOUT + 2, "the plain call gave up after %.1f s" % took)
        # The session is still good.
        logs = await client.call_tool("get-logs", {"LogType": "Warning"})
        check((logs.structured_content or {}).get("TotalCount") == 2, "get-logs after the timeout")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--project", required=True, help="the project of a fake-unity serving slow-run-tests.toml")
    args = parser.parse_args()
    figures = {}
    for part in (with_tasks, without_tasks):
        try:
            asyncio.run(part(args.bridge, args.project, figures))
        except Exception as e:  # a session that failed is one failed check
            check(False, "%s: %r" % (part.__name__, e))
    if "task" in figures:
        print("run-tests (12 s slower) as a task: %.1f s, %d tasks/get polls, past a %d s client timeout"
              % (figures["task"] + (TIMEOUT,)))
    if "cancel" in figures:
        print("tasks/cancel: cancelled %.1f s after the ack" % figures["cancel"])
    if "plain" in figures:
        print("the same run-tests without the extension: timed out at the client after %.1f s (%s)" % figures["plain"])
    print("python mcp client, tasks extension (2026-07-28): %d checks passed, %d failed"
          % (CHECKS["passed"], CHECKS["failed"]))
    return 1 if CHECKS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

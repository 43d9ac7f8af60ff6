#!/usr/bin/env python3
"""An independently written MCP client (the official Python SDK, `mcp` on
PyPI) driving the bridge over stdio against a running fake-unity: lists the
tools and calls each one, checking the results.

    python3 python_mcp_client.py --bridge PATH/unity-mcp-bridge --project DIR
    python3 python_mcp_client.py --bridge npx --prefix-arg=--no-install \
        --prefix-arg unity-mcp-bridge --cwd DIR --project DIR   # as a package starts it
    python3 python_mcp_client.py --bridge DIR/server/unity-mcp-bridge --as-given \
        --prefix-arg=--project --prefix-arg=DIR --project DIR   # as an MCP bundle's manifest says

The SDK's Client starts in "auto" mode: it probes with server/discover and
speaks 2026-07-28 when the bridge answers the probe (falling back to
initialize otherwise); `--mode legacy` forces the handshake, `--mode
2026-07-28` pins the stateless revision (and then list changes are
subscribed to with subscriptions/listen). Exit status 0
when every check passed; the last line is a summary.
"""
import argparse
import asyncio
import json
import re
import sys

from mcp import Client, StdioServerParameters

CHECKS = {"passed": 0, "failed": 0}
ERA = {"version": None}


def check(condition, what):
    if condition:
        CHECKS["passed"] += 1
    else:
        CHECKS["failed"] += 1
        print("FAIL:", what, file=sys.stderr)


def structured(result):
    return result.structured_content or {}


# uLoopMCP 3's catalogue (fake-unity --editor uloop-3, modelled on v3-beta
# c50f54c) and the bridge's own two tools; calls checked against the fixture
# project as that model serves it.
ULOOP3_TOOLS = sorted([
    "bridge-status", "wait-for-editor-ready", "clear-console", "compile", "control-play-mode",
    "execute-dynamic-code", "find-game-objects", "get-hierarchy", "get-logs", "record-input", "replay-input",
    "run-tests", "screenshot", "simulate-keyboard", "simulate-mouse-input", "simulate-mouse-ui",
])
ULOOP3_CALLS = [
    ("wait-for-editor-ready", {"timeout_seconds": 10}, lambda s: s.get("ready") is True),
    # Its socket (macOS, Linux) or its named pipe (Windows), named from the project.
    ("bridge-status", {}, lambda s: s.get("connected") is True and s.get("port") is None
     and re.fullmatch(r"unix:/tmp/uloop/UnityCliLoop-[0-9a-f]{16}\.sock|pipe:\\\\\.\\pipe\\uloop-UnityCliLoop-[0-9a-f]{16}",
                      str(s.get("endpoint"))) is not None),
    # The fixture's 7 lines and its package's line at load.
    ("get-logs", {}, lambda s: s.get("TotalCount") == 8 and s.get("Ver") == "3.0.0-beta.1"),
    ("find-game-objects", {"NamePattern": "Player"}, lambda s: [r.get("name") for r in s.get("results", [])][:1] == ["Player"]),
    ("compile", {}, lambda s: s.get("Success") is True and s.get("ErrorCount") == 0),
    ("control-play-mode", {"Action": "Pause"}, lambda s: s.get("IsPaused") is True),
    ("execute-dynamic-code", {"Code": "return 1+1;"}, lambda s: s.get("Result") == "2"),
    ("clear-console", {}, lambda s: s.get("ClearedLogCount") == 8),
]


async def run_uloop3(bridge, project, mode, expect_version):
    """The bridge in front of a uLoopMCP 3 Editor, found from the project
    folder (its socket under /tmp/uloop, or on Windows its named pipe)."""
    params = StdioServerParameters(command=bridge, args=["--project", project, "--log-level", "warn"])
    async with Client(params, read_timeout_seconds=60, mode=mode) as client:
        ERA["version"] = client.protocol_version
        check(client.protocol_version == expect_version,
              "mode %s: protocol version %s, expected %s" % (mode, client.protocol_version, expect_version))
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        check(names == ULOOP3_TOOLS, "tool list %s" % names)
        for name, arguments, ok in ULOOP3_CALLS:
            result = await client.call_tool(name, arguments)
            check(not result.is_error, "%s is not an error: %s" % (name, result.content))
            check(ok(structured(result)), "%s returned %s" % (name, json.dumps(structured(result))[:300]))
        failing = await client.call_tool("run-tests", {})
        check(failing.is_error and structured(failing).get("FailedCount") == 1, "a failing test run is an error result")
        invalid = await client.call_tool("get-logs", {"MaxCount": "many"})
        check(invalid.is_error and "MaxCount" in invalid.content[0].text, "invalid arguments are an error result")
        try:
            await client.call_tool("focus-window", {})  # 2.x's, gone from v3
            check(False, "a tool v3 does not have must be a JSON-RPC error")
        except Exception as e:  # the SDK raises MCPError for JSON-RPC errors
            check("Unknown tool" in str(e), "unknown tool error: %s" % e)


async def run(bridge, project, mode, expect_version, prefix=(), cwd=None, as_given=False, env=None):
    own = [] if as_given else ["--project", project, "--log-level", "warn"]
    params = StdioServerParameters(command=bridge, args=list(prefix) + own, cwd=cwd, env=env)
    async with Client(params, read_timeout_seconds=60, mode=mode) as client:
        ERA["version"] = client.protocol_version
        check(client.protocol_version == expect_version,
              "mode %s: protocol version %s, expected %s" % (mode, client.protocol_version, expect_version))
        # Pinned to 2026-07-28 the SDK sends no server/discover, so it is
        # never told who the server is.
        if client.server_info is not None or mode == "auto" or mode == "legacy":
            name = client.server_info.name if client.server_info else None
            check(name == "unity-mcp-bridge", "server name %s" % name)
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        expected = sorted([
            "bridge-status", "wait-for-editor-ready", "clear-console", "compile", "control-play-mode",
            "execute-dynamic-code", "execute-menu-item", "find-game-objects", "focus-window", "get-hierarchy",
            "get-logs", "get-menu-items", "get-provider-details", "run-tests", "screenshot", "unity-search",
        ])
        check(names == expected, "tool list %s" % names)
        for tool in tools.tools:
            check(tool.input_schema.get("type") == "object", "%s input schema is an object" % tool.name)
        if client.protocol_version == "2026-07-28":
            # list_changed in 2026-07-28 comes on a subscription, acknowledged first.
            async with client.listen(tools_list_changed=True) as subscription:
                honored = subscription.honored
                check(getattr(honored, "tools_list_changed", None) is True, "listen honored %r" % (honored,))

        calls = [
            ("wait-for-editor-ready", {"timeout_seconds": 10}, lambda s: s.get("ready") is True),
            ("bridge-status", {}, lambda s: s.get("connected") is True and s.get("protocolVersion") == 1),
            ("get-logs", {"LogType": "Warning"}, lambda s: s.get("TotalCount") == 2),
            ("find-game-objects", {"Tag": "Pickup"}, lambda s: s.get("totalFound") == 3),
            ("get-hierarchy", {"MaxDepth": 1}, lambda s: s.get("context", {}).get("nodeCount") == 17),
            ("unity-search", {"SearchQuery": "*.asmdef"}, lambda s: s.get("TotalCount") == 5),
            ("get-provider-details", {}, lambda s: s.get("TotalCount") == 5),
            ("get-menu-items", {"FilterText": "Fixture"}, lambda s: s.get("FilteredCount") == 3),
            ("execute-menu-item", {"MenuItemPath": "GameObject/Create Empty"}, lambda s: s.get("Success") is True),
            ("execute-dynamic-code", {"Code": 'return "from " + "python";'}, lambda s: s.get("Result") == "from python"),
            ("focus-window", {}, lambda s: s.get("Success") is True),
            ("control-play-mode", {"Action": "Pause"}, lambda s: s.get("IsPaused") is True),
            ("compile", {}, lambda s: s.get("Success") is True),
            ("run-tests", {"FilterType": "assembly", "FilterValue": "FixtureProject.Tests.PlayMode", "TestMode": "PlayMode"},
             lambda s: s.get("PassedCount") == 2),
            ("screenshot", {"WindowName": "Scene", "ResolutionScale": 0.5}, lambda s: s.get("ScreenshotCount") == 1),
            ("clear-console", {"AddConfirmationMessage": False}, lambda s: s.get("Success") is True),
        ]
        for name, arguments, ok in calls:
            result = await client.call_tool(name, arguments)
            check(not result.is_error, "%s is not an error: %s" % (name, result.content))
            check(ok(structured(result)), "%s returned %s" % (name, json.dumps(structured(result))[:300]))
            text = "".join(getattr(c, "text", "") for c in result.content)
            check(json.loads(text) == structured(result), "%s text block holds the structured content" % name)

        image = await client.call_tool("screenshot", {"ResolutionScale": 0.25, "IncludeImageData": True})
        kinds = [c.type for c in image.content]
        check(kinds == ["text", "image"], "screenshot content kinds %s" % kinds)

        failing = await client.call_tool("run-tests", {})
        check(failing.is_error and structured(failing).get("FailedCount") == 1, "a failing test run is an error result")
        invalid = await client.call_tool("get-logs", {"MaxCount": "many"})
        check(invalid.is_error and "MaxCount" in invalid.content[0].text, "invalid arguments are an error result")
        try:
            await client.call_tool("make-coffee", {})
            check(False, "an unknown tool must be a JSON-RPC error")
        except Exception as e:  # the SDK raises MCPError for JSON-RPC errors
            check("Unknown tool" in str(e), "unknown tool error: %s" % e)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--mode", default="auto",
                        help='the Client\'s mode: "auto" (its default), "legacy", or a version to pin ("2026-07-28")')
    parser.add_argument("--expect-version", default="2026-07-28",
                        help="the protocol version the session must end up with")
    parser.add_argument("--prefix-arg", action="append", default=[],
                        help="an argument before the bridge's own (the package launcher's: npx's, uvx's); repeatable")
    parser.add_argument("--cwd", help="the folder the bridge (or its launcher) is started in")
    parser.add_argument("--as-given", action="store_true",
                        help="start --bridge with the --prefix-arg arguments only, adding no --project or --log-level: "
                             "a command that names the project itself (an MCP bundle's resolved mcp_config)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="a variable set for the bridge (over the SDK's default environment); repeatable")
    parser.add_argument("--editor", default="package", choices=["package", "uloop-3"],
                        help="the Editor fake-unity plays: this project's package (default) or uLoopMCP 3")
    args = parser.parse_args()
    if args.editor == "uloop-3":
        asyncio.run(run_uloop3(args.bridge, args.project, args.mode, args.expect_version))
    else:
        env = dict(e.split("=", 1) for e in args.env) if args.env else None
        asyncio.run(run(args.bridge, args.project, args.mode, args.expect_version, args.prefix_arg, args.cwd,
                        args.as_given, env))
    print("python mcp client (mode %s, spoke %s%s): %d checks passed, %d failed"
          % (args.mode, ERA["version"], ", uLoopMCP 3" if args.editor == "uloop-3" else "",
             CHECKS["passed"], CHECKS["failed"]))
    return 1 if CHECKS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

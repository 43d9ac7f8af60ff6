#!/usr/bin/env python3
"""Drives the bridge with the MCP Inspector's CLI (`@modelcontextprotocol/inspector
--cli`, from npm), an MCP client written independently of this project: lists
the tools and calls each one, one Inspector process per request.

    python3 inspector_cli.py --inspector PATH/mcp-inspector --bridge PATH/unity-mcp-bridge --project DIR \
        [--era legacy|auto|modern] [--expect-protocol VERSION]

`--era` is the Inspector's `--protocol-era` (2.x; legacy by default there);
`--expect-protocol` checks, in the bridge's log, that every session spoke
that revision. Inspector 2.x in the auto or modern era declares MCP's tasks
extension (io.modelcontextprotocol/tasks) on every call and takes tasks on
its own (its bundled ext-tasks polls tasks/get and prints the final result):
the bridge answers compile and run-tests with a task there, which its log
says, and never in the handshake revisions. `--slow-run-tests`: the fake
serves slow-run-tests.toml (run-tests 12 s longer), and the run-tests call
must come back through its task after those 12 s. Exit status 0 when every
check passed; the last line is a summary.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

CHECKS = {"passed": 0, "failed": 0}
# The tools the bridge answered with a task in the last Inspector run (its log).
TASKS = {"last": []}


def check(condition, what):
    if condition:
        CHECKS["passed"] += 1
    else:
        CHECKS["failed"] += 1
        print("FAIL:", what, file=sys.stderr)


def inspector(args, *request):
    log = tempfile.NamedTemporaryFile(prefix="bridge-", suffix=".log", delete=False).name
    command = [args.inspector, "--cli", args.bridge, "--project", args.project, "--log-file=" + log]
    if args.era:
        command += ["--protocol-era", args.era]
    command += [*request]
    # The bridge's own log level; its log goes to the file, where the
    # revision each session spoke is read.
    env = dict(os.environ, UNITY_MCP_BRIDGE_LOG="info")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=args.project, env=env)
    with open(log) as f:
        logged = f.read()
    os.unlink(log)
    if args.expect_protocol:
        spoken = sorted(set(re.findall(r"MCP client .*protocol=(\S+)", logged)))
        check(spoken == [args.expect_protocol], "%s: the bridge was spoken to in %s, expected %s" % (request, spoken, args.expect_protocol))
    TASKS["last"] = re.findall(r"tools/call answered with a task name=(\S+)", logged)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        check(False, "%s printed no JSON (exit %s): %s %s" % (request, done.returncode, done.stdout[-500:], done.stderr[-500:]))
        return {}


def call(args, tool, **arguments):
    request = ["--method", "tools/call", "--tool-name", tool]
    for key, value in arguments.items():
        request += ["--tool-arg", "%s=%s" % (key, json.dumps(value) if not isinstance(value, str) else value)]
    return inspector(args, *request)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inspector", required=True)
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--era", help="the Inspector's --protocol-era (Inspector 2.x): legacy, auto or modern")
    parser.add_argument("--expect-protocol", help="the MCP revision every session must speak")
    parser.add_argument("--editor", default="package", choices=["package", "uloop-3"],
                        help="the Editor fake-unity plays: this project's package (default) or uLoopMCP 3")
    parser.add_argument("--slow-run-tests", action="store_true",
                        help="fake-unity serves slow-run-tests.toml: run-tests must come back through its task")
    args = parser.parse_args()

    listed = inspector(args, "--method", "tools/list")
    names = sorted(t["name"] for t in listed.get("tools", []))
    check(len(names) == 16 and "get-logs" in names and "bridge-status" in names, "tools/list gave %s" % names)

    package = [
        ("bridge-status", {}, lambda s: s.get("connected") is True),
        ("wait-for-editor-ready", {"timeout_seconds": 10}, lambda s: s.get("ready") is True),
        ("get-logs", {"LogType": "Error"}, lambda s: s.get("TotalCount") == 2),
        ("find-game-objects", {"RequiredComponents": ["EnemyAI"]}, lambda s: s.get("totalFound") == 2),
        ("get-hierarchy", {"RootPath": "Environment"}, lambda s: s.get("context", {}).get("nodeCount") == 6),
        ("unity-search", {"SearchQuery": "t:SceneAsset"}, lambda s: s.get("TotalCount") == 2),
        ("get-provider-details", {"ActiveOnly": True}, lambda s: s.get("TotalCount") == 4),
        ("get-menu-items", {"FilterText": "Tools/Fixture/Log", "FilterType": "startswith"}, lambda s: s.get("FilteredCount") == 2),
        ("execute-menu-item", {"MenuItemPath": "Tools/Fixture/Log Warning"}, lambda s: s.get("Success") is True),
        ("execute-dynamic-code", {"Code": "return 1 + 1;"}, lambda s: s.get("Result") == "2"),
        ("focus-window", {}, lambda s: s.get("Success") is True),
        ("control-play-mode", {"Action": "Play"}, lambda s: s.get("IsPlaying") is True),
        ("compile", {}, lambda s: s.get("ErrorCount") == 0),
        ("run-tests", {"FilterType": "exact", "FilterValue": "FixtureProject.Tests.HealthTests.IsDead_AfterLethalDamage"},
         lambda s: s.get("PassedCount") == 1),
        ("screenshot", {"ResolutionScale": 0.5}, lambda s: s.get("ScreenshotCount") == 1),
        ("clear-console", {}, lambda s: s.get("Success") is True),
    ]
    # uLoopMCP 3 (fake-unity's model of v3-beta c50f54c), found by the
    # bridge from the project folder: its own catalogue.
    uloop3 = [
        ("bridge-status", {}, lambda s: s.get("connected") is True and s.get("port") is None
         and str(s.get("endpoint", "")).startswith(("unix:/tmp/uloop/UnityCliLoop-", "pipe:"))),
        ("get-logs", {"LogType": "Error"}, lambda s: s.get("TotalCount") == 2 and s.get("Ver") == "3.0.0-beta.1"),
        ("find-game-objects", {"NamePattern": "Player"}, lambda s: [r.get("name") for r in s.get("results", [])][:1] == ["Player"]),
        ("compile", {}, lambda s: s.get("ErrorCount") == 0),
        ("execute-dynamic-code", {"Code": "return 1 + 1;"}, lambda s: s.get("Result") == "2"),
        ("clear-console", {}, lambda s: s.get("Success") is True),
    ]
    if args.editor == "uloop-3":
        check("record-input" in names and "get-menu-items" not in names, "tools/list gave %s (uLoopMCP 3's)" % names)
    expectations = uloop3 if args.editor == "uloop-3" else package
    # Inspector 2.x takes tasks in the 2026-07-28 eras; the bridge makes
    # compile and run-tests tasks (the other calls here are quick: plain).
    takes_tasks = args.era in ("auto", "modern") and args.expect_protocol == "2026-07-28"
    for tool, arguments, ok in expectations:
        started = time.monotonic()
        result = call(args, tool, **arguments)
        took = time.monotonic() - started
        structured = result.get("structuredContent", {})
        check(not result.get("isError"), "%s is not an error: %s" % (tool, json.dumps(result)[:300]))
        check(ok(structured), "%s returned %s" % (tool, json.dumps(structured)[:300]))
        as_task = tool in ("compile", "run-tests") and takes_tasks
        check(TASKS["last"] == ([tool] if as_task else []),
              "%s: answered with a task %s, expected %s" % (tool, TASKS["last"], as_task))
        if tool == "run-tests" and args.slow_run_tests:
            # 12 s more than usual, past any one request's patience: its task.
            check(took >= 12 and TASKS["last"] == ["run-tests"],
                  "the slow run-tests came back through its task: %.1f s, tasks %s" % (took, TASKS["last"]))
            print("slow run-tests through the Inspector: %.1f s (%s)" % (took, "a task" if TASKS["last"] else "no task"))

    if args.editor == "uloop-3":
        # v3 declares LogType a plain string (any value is Unity's to judge):
        # a count that is not a number is what its schema refuses.
        invalid = call(args, "get-logs", MaxCount="many")
        check(invalid.get("isError") is True, "a value of the wrong type is an error result: %s" % json.dumps(invalid)[:300])
    else:
        invalid = call(args, "get-logs", LogType="Fatal")
        check(invalid.get("isError") is True, "an invalid enum value is an error result: %s" % json.dumps(invalid)[:300])

    print("mcp inspector cli (era %s, spoke %s%s): %d checks passed, %d failed"
          % (args.era or "default", args.expect_protocol or "unchecked", ", uLoopMCP 3" if args.editor == "uloop-3" else "",
             CHECKS["passed"], CHECKS["failed"]))
    return 1 if CHECKS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

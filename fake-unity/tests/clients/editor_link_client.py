#!/usr/bin/env python3
"""An editor-link client written independently of the Rust code (standard
library only): finds the Editor through the project's discovery file, calls
every tool of protocol section 6 in both framings, checks the errors of
section 3, and drives a domain reload through the control API.

    python3 editor_link_client.py --project DIR --control http://127.0.0.1:N

Exit status 0 when every check passed; the last line is a summary.
"""
import argparse
import json
import os
import socket
import sys
import time
import urllib.request

CHECKS = {"passed": 0, "failed": 0}


def check(condition, what):
    if condition:
        CHECKS["passed"] += 1
    else:
        CHECKS["failed"] += 1
        print("FAIL:", what, file=sys.stderr)


def discovery(project):
    with open(os.path.join(project, "Library", "MCPInstance.json"), encoding="utf-8") as f:
        return json.load(f)


class Link:
    def __init__(self, port, framing, token=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.framing = framing
        self.token = token
        self.buf = b""
        self.next_id = 1

    def send(self, message):
        if self.token is not None and "method" in message:
            message = dict(message, **{"x-token": self.token})
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        if self.framing == "header":
            self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        else:
            self.sock.sendall(body + b"\n")

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def read(self):
        """The next message, or None when the Editor closed the connection."""
        while True:
            if self.framing == "header":
                end = self.buf.find(b"\r\n\r\n")
                if end >= 0:
                    headers = self.buf[:end].decode("ascii").split("\r\n")
                    length = next(int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length"))
                    if len(self.buf) >= end + 4 + length:
                        body = self.buf[end + 4:end + 4 + length]
                        self.buf = self.buf[end + 4 + length:]
                        return json.loads(body.decode("utf-8"))
            else:
                end = self.buf.find(b"\n")
                if end >= 0:
                    line, self.buf = self.buf[:end], self.buf[end + 1:]
                    return json.loads(line.decode("utf-8"))
            if not self._fill():
                return None

    def call(self, method, params=None):
        request_id = "py-%d" % self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        while True:
            message = self.read()
            if message is None:
                raise RuntimeError("connection closed waiting for %s" % method)
            if message.get("id") == request_id:
                return message

    def result(self, method, params=None):
        answer = self.call(method, params)
        check("result" in answer, "%s answered %s" % (method, json.dumps(answer)[:300]))
        result = answer.get("result", {})
        check(result.get("Ver") is not None, "%s result carries Ver" % method)
        return result

    def error(self, method, params=None):
        answer = self.call(method, params)
        check("error" in answer, "%s should fail: %s" % (method, json.dumps(answer)[:300]))
        return answer.get("error", {})


def back_after_reload(link, project, framing, token, before):
    """Reads until the Editor closes `link` for a domain reload; a new link
    once it listens again with a new session."""
    reasons = []
    while True:
        message = link.read()
        if message is None:
            break
        if message.get("method") == "notifications/server/shutdown":
            reasons.append(message["params"]["reason"])
    check(reasons == ["DomainReload"], "a domain reload closed the connection: %s" % reasons)
    deadline = time.time() + 10
    after = discovery(project)
    while (after.get("state") != "ready" or after.get("serverSessionId") == before) and time.time() < deadline:
        time.sleep(0.02)
        after = discovery(project)
    return Link(after["port"], framing, token)


def every_tool(project, framing, token):
    link = Link(discovery(project)["port"], framing, token)
    names = [t["name"] for t in link.result("get-tool-details", {"IncludeDevelopmentOnly": True})["Tools"]]
    expected = ["compile", "get-logs", "run-tests", "clear-console", "find-game-objects", "unity-search",
                "get-hierarchy", "get-provider-details", "get-menu-items", "execute-menu-item",
                "execute-dynamic-code", "focus-window", "control-play-mode", "screenshot", "ping",
                "set-client-name", "get-tool-details", "get-version", "debug-sleep"]
    check(names == expected, "tool list %s" % names)

    check(link.result("ping", {"Message": "py"})["Message"] == "Unity MCP Bridge received: py", "ping echo")
    check(link.result("set-client-name", {"ClientName": "python"})["ClientName"] == "python", "client name")
    check("resume" in link.result("get-version")["Capabilities"], "resume advertised")
    check(link.result("debug-sleep", {"SleepSeconds": 0.01})["WasCancelled"] is False, "debug-sleep")
    check(link.result("compile")["Success"] is True, "clean compile")
    logs = link.result("get-logs", {"LogType": "Error", "IncludeStackTrace": False})
    check(all(entry["Type"] == "Error" and "StackTrace" not in entry for entry in logs["Logs"]), "log filter")
    tests = link.result("run-tests", {"FilterType": "regex", "FilterValue": "HealthTests"})
    check((tests["TestCount"], tests["PassedCount"], tests["Success"]) == (5, 5, True), "run-tests %s" % tests)
    found = link.result("find-game-objects", {"Tag": "Enemy", "IncludeInactive": True})
    check(found["totalFound"] == 3, "find by tag %s" % found["totalFound"])
    search = link.result("unity-search", {"SearchQuery": "t:Material"})
    check([r["Path"] for r in search["Results"]] == ["Assets/Materials/Ground.mat"], "search by type")
    hierarchy = link.result("get-hierarchy", {"RootPath": "Player", "MaxDepth": 1})
    check(hierarchy["context"]["nodeCount"] == 3, "hierarchy %s" % hierarchy["context"])
    check(link.result("get-provider-details", {"ProviderId": "asset"})["TotalCount"] == 1, "provider details")
    check(link.result("get-menu-items", {"FilterText": "Tools/"})["FilteredCount"] == 3, "menu items")
    check(link.result("execute-menu-item", {"MenuItemPath": "Tools/Fixture/Log Warning"})["Success"], "menu item")
    code = link.result("execute-dynamic-code", {"Code": "return 6 + 7;"})
    check(code["Result"] == "13", "dynamic code %s" % code)
    check(link.result("focus-window")["Success"], "focus")
    session = discovery(project)["serverSessionId"]
    check(link.result("control-play-mode", {"Action": "Play"})["IsPlaying"] is True, "play")
    # Entering play mode reloads the domain, as Unity's default settings
    # (the fixture project's) say: the Editor comes back in play mode.
    link = back_after_reload(link, project, framing, token, session)
    link.result("set-client-name", {"ClientName": "python"})
    check(link.result("control-play-mode", {"Action": "Stop"})["IsPlaying"] is False, "stop after the reload")
    shot = link.result("screenshot", {"ResolutionScale": 0.25, "IncludeImageData": True})
    check(shot["Screenshots"][0]["Width"] == 160, "screenshot size")
    check(shot["Screenshots"][0]["ImageDataBase64"].startswith("iVBORw0KGgo"), "screenshot is a PNG")
    cleared = link.result("clear-console", {"AddConfirmationMessage": False})
    check(cleared["Success"] and link.result("get-logs")["TotalCount"] == 0, "clear-console")

    check(link.error("no-such-tool")["code"] == -32601, "unknown tool")
    bad = link.error("get-logs", {"MaxCount": "many"})
    check(bad["code"] == -32602 and bad["data"]["parameter"] == "MaxCount", "invalid params %s" % bad)
    link.send({"jsonrpc": "2.0", "method": "ping"})  # a notification: never answered
    check(link.call("ping")["result"]["Message"] == "Unity MCP Bridge received: ", "answer after a notification")
    numeric = {"jsonrpc": "2.0", "id": 42, "method": "ping", "params": {}}
    link.send(numeric)
    # Notifications may come first (tools/list_changed once the new domain's
    # tools are ready after the reload of entering play mode).
    answer = link.read()
    while answer is not None and "method" in answer:
        answer = link.read()
    check(answer is not None and answer.get("id") == 42, "numeric id echoed as a number: %s" % answer)


def reload(project, control):
    before = discovery(project)
    link = Link(before["port"], "header", before.get("token"))
    link.result("ping")
    request = urllib.request.Request(control + "/reload", data=b'{"downtimeMs": 100}', method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        check(response.status == 202, "reload accepted")
    note = link.read()
    # tools/list_changed may still come from the reload before this one.
    while note is not None and note.get("method") == "notifications/tools/list_changed":
        note = link.read()
    check(note and note.get("method") == "notifications/server/shutdown"
          and note["params"] == {"reason": "DomainReload"}, "shutdown notification %s" % note)
    check(link.read() is None, "connection closed after the shutdown notification")
    deadline = time.time() + 10
    after = discovery(project)
    while (after.get("state") != "ready" or after.get("serverSessionId") == before["serverSessionId"]) and time.time() < deadline:
        time.sleep(0.02)
        after = discovery(project)
    check(after["state"] == "ready", "discovery ready again")
    check(after["serverSessionId"] != before["serverSessionId"], "new session id")
    check(after.get("token") == before.get("token"), "the token outlives the reload (one per Editor process)")
    again = Link(after["port"], "newline", after.get("token"))
    check(again.result("ping", {"Message": "back"})["Message"] == "Unity MCP Bridge received: back", "back on the published port")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--project", required=True)
    parser.add_argument("--control", required=True)
    args = parser.parse_args()
    published = discovery(args.project)
    port, token = published["port"], published.get("token")
    if token is not None:
        mode = os.stat(os.path.join(args.project, "Library", "MCPInstance.json")).st_mode
        check(os.name != "posix" or mode & 0o077 == 0, "the discovery file is private (mode %o)" % (mode & 0o777))
        refused = Link(port, "header").call("ping")
        check(refused.get("error", {}).get("data", {}).get("type") == "unauthorized",
              "a request without the token is refused: %s" % json.dumps(refused)[:300])
    for framing in ("header", "newline"):
        every_tool(args.project, framing, token)
    reload(args.project, args.control)
    print("python editor-link client: %d checks passed, %d failed" % (CHECKS["passed"], CHECKS["failed"]))
    return 1 if CHECKS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())

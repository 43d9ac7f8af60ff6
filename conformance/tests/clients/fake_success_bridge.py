"""An MCP stdio server that answers every tools/call with a success it made
up, never asking Unity: what uLoopMCP's TypeScript server does with a call
cut off by a domain reload ("Waiting for Unity to be ready ... retry").
The benchmark must count none of its answers as real."""

import json
import sys

for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message or "method" not in message:
        continue
    method, result = message["method"], None
    if method == "initialize":
        result = {"protocolVersion": message.get("params", {}).get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "fake-success", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "Waiting for Unity to be ready. Please retry in a moment."}]}
    elif method == "ping":
        result = {}
    if result is None:
        answer = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
    else:
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()

#!/usr/bin/env node
// Starts the prebuilt unity-mcp-bridge for this platform, which npm installed
// as one of this package's optional dependencies (@unity-mcp-bridge/<os>-<cpu>;
// npm installs only the one whose os and cpu match). The bridge inherits
// stdin, stdout and stderr: MCP messages go straight between the client and
// the bridge, never through Node. When Node is ended, the bridge sees its
// parent gone and ends too.
"use strict";

const { spawnSync } = require("node:child_process");
const { targets } = require("../lib/targets.json");

function fail(message) {
  process.stderr.write(`unity-mcp-bridge (npm launcher): ${message}\n`);
  process.exit(2);
}

function binaryPath() {
  // For testing a build, or a platform without a prebuilt binary.
  if (process.env.UNITY_MCP_BRIDGE_BINARY) return process.env.UNITY_MCP_BRIDGE_BINARY;
  const target = targets.find((t) => t.os === process.platform && t.cpu === process.arch);
  if (!target) {
    fail(
      `there is no prebuilt unity-mcp-bridge for ${process.platform}-${process.arch}; ` +
        "build it with `cargo install --git https://github.com/unity-mcp-bridge/unity-mcp-bridge unity-mcp-bridge`"
    );
  }
  const pkg = `@unity-mcp-bridge/${target.npm}`;
  try {
    return require.resolve(`${pkg}/bin/${target.exe}`);
  } catch {
    fail(
      `${pkg} is not installed. npm leaves optional dependencies out when told to ` +
        "(--omit=optional, --no-optional) and a lockfile made on another platform may lack it: " +
        "reinstall without those, or run `npx -y unity-mcp-bridge` afresh."
    );
  }
}

const binary = binaryPath();
const child = spawnSync(binary, process.argv.slice(2), {
  stdio: "inherit",
  windowsHide: true,
  // `setup` writes an npx command when it was started this way.
  env: { ...process.env, UNITY_MCP_BRIDGE_LAUNCHER: "npm" },
});
if (child.error) fail(`cannot start ${binary}: ${child.error.message}`);
if (child.signal) process.kill(process.pid, child.signal);
process.exit(child.status === null ? 1 : child.status);

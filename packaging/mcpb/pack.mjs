#!/usr/bin/env node
// Builds the MCP bundles (.mcpb, manifest_version 0.3) of a release into
// --out: one per platform binary given, unity-mcp-bridge-<version>-<os>-<cpu>.mcpb,
// packed by the official MCPB CLI (`mcpb pack`, which validates the
// manifest as it packs) from manifest.json (packaging/mcpb/manifest.json
// with the version, the platform and the executable's name filled in) and
// server/<the binary>. Claude Desktop and other MCPB clients install it by
// unzipping it into a folder of their own and starting server.mcp_config
// with ${__dirname} and ${user_config.*} substituted.
//
//   node packaging/mcpb/pack.mjs --version 0.1.0 --out dist/mcpb \
//        --binary linux-x64=target/release/unity-mcp-bridge [--binary win32-x64=…] \
//        [--mcpb PATH-TO-THE-mcpb-CLI]
//
// Without --mcpb the CLI is run through `npx -y @anthropic-ai/mcpb@<pin>`.
// Prints one line per bundle: its path, size and SHA-256 (which
// packaging/registry/stamp.py puts into the server.json published to the
// MCP Registry).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseReleaseArgs, targets } from "../release-args.mjs";

/** The MCPB CLI this packs with, when not given (.ci/packages installs the same). */
export const MCPB = "@anthropic-ai/mcpb@2.1.2";

const here = dirname(fileURLToPath(import.meta.url));
const { version, out, binaries, extra } = parseReleaseArgs("pack.mjs", process.argv.slice(2), ["mcpb"]);
mkdirSync(out, { recursive: true });
const [cli, ...cliArgs] = extra.mcpb ? [extra.mcpb] : ["npx", "-y", MCPB];

const template = JSON.parse(readFileSync(join(here, "manifest.json"), "utf8"));

/** The template made the manifest of one platform's bundle. */
function manifestFor(target) {
  const manifest = structuredClone(template);
  const exe = `server/${target.exe}`;
  manifest.version = version;
  manifest.server.entry_point = exe;
  manifest.server.mcp_config.command = `\${__dirname}/${exe}`;
  manifest.compatibility = { ...manifest.compatibility, platforms: [target.os] };
  return manifest;
}

const work = mkdtempSync(join(tmpdir(), "unity-mcp-bridge-mcpb-"));
try {
  for (const [npm, path] of binaries) {
    const target = targets.find((t) => t.npm === npm);
    const manifest = manifestFor(target);
    const dir = join(work, npm);
    mkdirSync(join(dir, "server"), { recursive: true });
    writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
    copyFileSync(path, join(dir, manifest.server.entry_point));
    chmodSync(join(dir, manifest.server.entry_point), 0o755);
    const file = join(out, `unity-mcp-bridge-${version}-${npm}.mcpb`);
    rmSync(file, { force: true });
    // Its report (files, sizes, the manifest's check) to stderr: stdout is this script's list.
    execFileSync(cli, [...cliArgs, "pack", dir, file], {
      stdio: ["ignore", process.stderr, "inherit"],
      shell: process.platform === "win32",
    });
    const bundle = readFileSync(file);
    const sha256 = createHash("sha256").update(bundle).digest("hex");
    console.log(`${file} ${bundle.length} ${sha256}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

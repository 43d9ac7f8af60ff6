#!/usr/bin/env node
// Builds the npm packages of a release into --out, as tarballs (`npm pack`):
// one per platform binary given (@unity-mcp-bridge/<os>-<cpu>, with `os` and
// `cpu` set so npm installs only the matching one), and the main package
// `unity-mcp-bridge`, whose launcher runs it and which lists every platform of
// packaging/targets.json as an optional dependency at the same version.
//
//   node packaging/npm/pack.mjs --version 0.1.0 --out dist/npm \
//        --binary linux-x64=target/release/unity-mcp-bridge [--binary win32-x64=…]
//
// Publishing is `npm publish` of each tarball, the platform packages first.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const { targets } = JSON.parse(readFileSync(join(here, "..", "targets.json"), "utf8"));

function usage(message) {
  console.error(`pack.mjs: ${message}\nusage: pack.mjs --version X.Y.Z --out DIR --binary <os>-<cpu>=PATH …`);
  process.exit(2);
}

const args = process.argv.slice(2);
let version, out;
const binaries = new Map();
for (let i = 0; i < args.length; i += 2) {
  const [flag, value] = [args[i], args[i + 1]];
  if (value === undefined) usage(`${flag} needs a value`);
  if (flag === "--version") version = value;
  else if (flag === "--out") out = resolve(value);
  else if (flag === "--binary") {
    const [npm, path] = [value.slice(0, value.indexOf("=")), value.slice(value.indexOf("=") + 1)];
    if (!targets.some((t) => t.npm === npm)) usage(`unknown platform ${npm} (${targets.map((t) => t.npm).join(", ")})`);
    binaries.set(npm, resolve(path));
  } else usage(`unknown option ${flag}`);
}
if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) usage("--version X.Y.Z is needed");
if (!out) usage("--out DIR is needed");
if (binaries.size === 0) usage("at least one --binary is needed");
mkdirSync(out, { recursive: true });

const common = JSON.parse(readFileSync(join(here, "unity-mcp-bridge", "package.json"), "utf8"));
const work = mkdtempSync(join(tmpdir(), "unity-mcp-bridge-npm-"));
const packed = [];
function pack(dir) {
  const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], {
    cwd: dir,
    encoding: "utf8",
    shell: process.platform === "win32",
  }).trim();
  packed.push(join(out, name.split("\n").pop()));
}

try {
  for (const [npm, path] of binaries) {
    const target = targets.find((t) => t.npm === npm);
    const dir = join(work, npm);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(path, join(dir, "bin", target.exe));
    chmodSync(join(dir, "bin", target.exe), 0o755);
    const pkg = {
      name: `@unity-mcp-bridge/${npm}`,
      version,
      description: `The unity-mcp-bridge binary for ${target.os} ${target.cpu} (${target.rust}); installed by the unity-mcp-bridge package.`,
      license: common.license,
      repository: common.repository,
      os: [target.os],
      cpu: [target.cpu],
      files: ["bin/"],
      // No "bin" here: the main package's launcher is the one command.
      preferUnplugged: true,
    };
    writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
    writeFileSync(join(dir, "README.md"), `# @unity-mcp-bridge/${npm}\n\n${pkg.description}\nUse the \`unity-mcp-bridge\` package.\n`);
    pack(dir);
  }
  const main = join(work, "unity-mcp-bridge");
  cpSync(join(here, "unity-mcp-bridge"), main, { recursive: true });
  mkdirSync(join(main, "lib"), { recursive: true });
  copyFileSync(join(here, "..", "targets.json"), join(main, "lib", "targets.json"));
  const pkg = { ...common, version, optionalDependencies: {} };
  for (const t of targets) pkg.optionalDependencies[`@unity-mcp-bridge/${t.npm}`] = version;
  writeFileSync(join(main, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  chmodSync(join(main, "bin", "unity-mcp-bridge.js"), 0o755);
  pack(main);
} finally {
  rmSync(work, { recursive: true, force: true });
}
for (const p of packed) console.log(p);

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
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseReleaseArgs, targets } from "../release-args.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const { version, out, binaries } = parseReleaseArgs("pack.mjs", process.argv.slice(2));
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

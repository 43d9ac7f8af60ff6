// The command line both packers take (packaging/npm/pack.mjs and
// packaging/mcpb/pack.mjs): --version X.Y.Z, --out DIR, and one
// --binary <os>-<cpu>=PATH per platform of packaging/targets.json, plus
// any options a packer names in `extra` (each with a value).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The platforms a release ships (packaging/targets.json). */
export const targets = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), "targets.json"), "utf8"),
).targets;

/** { version, out, binaries: Map(npm platform → path), extra: { name → value } }, or exit 2 saying why. */
export function parseReleaseArgs(program, argv, extra = []) {
  const usage = (message) => {
    const more = extra.map((name) => ` [--${name} VALUE]`).join("");
    console.error(`${program}: ${message}\nusage: ${program} --version X.Y.Z --out DIR --binary <os>-<cpu>=PATH …${more}`);
    process.exit(2);
  };
  let version, out;
  const binaries = new Map();
  const given = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) usage(`${flag} needs a value`);
    if (flag === "--version") version = value;
    else if (flag === "--out") out = resolve(value);
    else if (flag === "--binary") {
      const [npm, path] = [value.slice(0, value.indexOf("=")), value.slice(value.indexOf("=") + 1)];
      if (!targets.some((t) => t.npm === npm)) usage(`unknown platform ${npm} (${targets.map((t) => t.npm).join(", ")})`);
      binaries.set(npm, resolve(path));
    } else if (flag.startsWith("--") && extra.includes(flag.slice(2))) given[flag.slice(2)] = value;
    else usage(`unknown option ${flag}`);
  }
  if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) usage("--version X.Y.Z is needed");
  if (!out) usage("--out DIR is needed");
  if (binaries.size === 0) usage("at least one --binary is needed");
  return { version, out, binaries, extra: given };
}

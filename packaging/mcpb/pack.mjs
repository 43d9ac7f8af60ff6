#!/usr/bin/env node
// Builds the MCP bundles (.mcpb, manifest_version 0.3) of a release into
// --out: one per platform binary given, unity-mcp-bridge-<version>-<os>-<cpu>.mcpb,
// a zip of manifest.json (packaging/mcpb/manifest.json with the version, the
// platform and the executable's name filled in) and server/<the binary>.
// Claude Desktop and other MCPB clients install it by unzipping it into a
// folder of their own and starting server.mcp_config with ${__dirname} and
// ${user_config.*} substituted.
//
//   node packaging/mcpb/pack.mjs --version 0.1.0 --out dist/mcpb \
//        --binary linux-x64=target/release/unity-mcp-bridge [--binary win32-x64=…]
//
// Node's standard library only (the zip is written here: deflate from zlib,
// the executable's mode kept in the entry's Unix attributes, as `mcpb pack`
// does). The bundle is reproducible: same binary, same bytes, same SHA-256
// (fixed entry times and order). packaging/registry/stamp.py puts each
// bundle's hash into the server.json published to the MCP Registry.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateRawSync } from "node:zlib";

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

// CRC-32 (IEEE), as zip wants it.
const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip of `entries` ({ name, data, mode }), deflated, with Unix modes. */
function zip(entries) {
  const DOS_TIME = 0; // 00:00:00
  const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01: fixed, for reproducible bundles
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { name, data, mode } of entries) {
    const nameBytes = Buffer.from(name, "utf8");
    const deflated = deflateRawSync(data, { level: 9 });
    const stored = deflated.length >= data.length;
    const body = stored ? data : deflated;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0
    local.writeUInt16LE(0x0800, 6); // names are UTF-8
    local.writeUInt16LE(stored ? 0 : 8, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, nameBytes, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0 (so the mode below counts)
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(stored ? 0 : 8, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt16LE(0, 30); // extra
    central.writeUInt16LE(0, 32); // comment
    central.writeUInt16LE(0, 34); // disk
    central.writeUInt16LE(0, 36); // internal attributes
    central.writeUInt32LE(((0o100000 | mode) << 16) >>> 0, 38); // a regular file, its permissions
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

for (const [npm, path] of binaries) {
  const target = targets.find((t) => t.npm === npm);
  const manifest = manifestFor(target);
  const bundle = zip([
    { name: "manifest.json", data: Buffer.from(JSON.stringify(manifest, null, 2) + "\n", "utf8"), mode: 0o644 },
    { name: manifest.server.entry_point, data: readFileSync(path), mode: 0o755 },
  ]);
  const file = join(out, `unity-mcp-bridge-${version}-${npm}.mcpb`);
  writeFileSync(file, bundle);
  const sha256 = createHash("sha256").update(bundle).digest("hex");
  console.log(`${file} ${bundle.length} ${sha256}`);
}

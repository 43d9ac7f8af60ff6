#!/usr/bin/env python3
"""Writes the server.json a release publishes to the MCP Registry: the
committed packaging/registry/server.json (npm, PyPI and crates.io entries)
plus one `mcpb` entry per MCP bundle built for the release, each with its
GitHub release download URL and the SHA-256 of the file itself.

    python3 packaging/registry/stamp.py --version 0.1.0 --mcpb-dir dist/mcpb \\
        --out dist/server.json [--partial] [--drop npm] [--drop cargo] [--validate]

--version must be the version server.json already names (the workspace's:
the bridge's test suite holds them equal), so a stale file fails here rather
than at the registry. Every platform of packaging/targets.json needs its
unity-mcp-bridge-<version>-<os>-<cpu>.mcpb in --mcpb-dir unless --partial
(a build of this machine's platform only). --drop leaves out the entries of
a registry type whose package was not published (the registry checks each
package exists and names this server before it accepts the entry).

--validate checks what it wrote against the registry's schema
(the registry's published schema, --validate FILE) with the `jsonschema` package from PyPI;
everything else is Python's standard library. The hashes are the files' own,
never placeholders: the registry does not check them, MCP clients do.
"""
import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", required=True)
    parser.add_argument("--mcpb-dir", required=True, help="the folder packaging/mcpb/pack.mjs wrote the bundles to")
    parser.add_argument("--out", required=True, help="where to write the stamped server.json")
    parser.add_argument("--server-json", default=os.path.join(HERE, "server.json"))
    parser.add_argument("--partial", action="store_true", help="bundles of some platforms only")
    parser.add_argument("--drop", action="append", default=[], metavar="REGISTRY_TYPE",
                        help="leave out the entries of this registry type (npm, pypi, cargo); repeatable")
    parser.add_argument("--validate", metavar="SCHEMA",
                        help="check the result against the registry's schema in this file (its $id names where it is "
                             "published; needs the jsonschema package)")
    args = parser.parse_args()

    with open(args.server_json, encoding="utf-8") as f:
        server = json.load(f)
    with open(os.path.join(HERE, "..", "targets.json"), encoding="utf-8") as f:
        targets = json.load(f)["targets"]

    stale = [p["registryType"] for p in server.get("packages", []) if p.get("version") != args.version]
    if server.get("version") != args.version or stale:
        sys.exit("stamp.py: %s names version %s (packages %s), not %s" % (
            args.server_json, server.get("version"), ", ".join(stale) or "agree", args.version))
    if any(p["registryType"] == "mcpb" for p in server.get("packages", [])):
        sys.exit("stamp.py: %s already has mcpb entries; they are added here" % args.server_json)

    packages = [p for p in server.get("packages", []) if p["registryType"] not in args.drop]
    repository = server["repository"]["url"].rstrip("/")
    missing = []
    for target in targets:
        name = "unity-mcp-bridge-%s-%s.mcpb" % (args.version, target["npm"])
        path = os.path.join(args.mcpb_dir, name)
        if not os.path.isfile(path):
            missing.append(name)
            continue
        digest = sha256(path)
        packages.append({
            "registryType": "mcpb",
            "identifier": "%s/releases/download/v%s/%s" % (repository, args.version, name),
            "version": args.version,
            "fileSha256": digest,
            "transport": {"type": "stdio"},
        })
        print("mcpb %s: %s" % (name, digest))
    if missing and not args.partial:
        sys.exit("stamp.py: no %s in %s" % (", ".join(missing), args.mcpb_dir))
    if len(missing) == len(targets):
        sys.exit("stamp.py: no bundle of version %s in %s" % (args.version, args.mcpb_dir))

    server["packages"] = packages
    valid = ""
    if args.validate:
        import jsonschema  # PyPI's; only for --validate

        with open(args.validate, encoding="utf-8") as f:
            schema = json.load(f)
        if schema.get("$id") != server.get("$schema"):
            sys.exit("stamp.py: %s is the schema %s, and server.json names %s" % (args.validate, schema.get("$id"), server.get("$schema")))
        errors = ["/".join(map(str, e.absolute_path)) + ": " + e.message
                  for e in jsonschema.Draft7Validator(schema).iter_errors(server)]
        if errors:
            sys.exit("stamp.py: the result is not valid against %s:\n  %s" % (schema["$id"], "\n  ".join(errors)))
        valid = ", valid against %s" % schema["$id"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(server, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print("%s: %s %s, packages: %s%s" % (args.out, server["name"], server["version"],
                                        ", ".join(p["registryType"] for p in packages), valid))


if __name__ == "__main__":
    main()

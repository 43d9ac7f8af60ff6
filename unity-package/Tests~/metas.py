#!/usr/bin/env python3
"""Writes the .meta file of every asset of the package that lacks one.

Unity ignores files without a .meta inside an immutable package (installed
from git or a tarball), so every file and folder Unity imports needs one.
GUIDs are derived from the package name and the path, so the same file
always gets the same GUID. Folders whose name ends in ~ are not imported.
"""
import hashlib, os, sys

PACKAGE = "dev.unitymcp.bridge"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IMPORTER = {
    ".cs": "MonoImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  defaultReferences: []\n  executionOrder: 0\n  icon: {instanceID: 0}\n",
    ".asmdef": "AssemblyDefinitionImporter:\n  externalObjects: {}\n",
    ".json": "TextScriptImporter:\n  externalObjects: {}\n",
    ".md": "TextScriptImporter:\n  externalObjects: {}\n",
}
TAIL = "  userData: \n  assetBundleName: \n  assetBundleVariant: \n"

written = 0
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = sorted(d for d in dirnames if not d.endswith("~") and not d.startswith("."))
    for name in dirnames + sorted(filenames):
        if name.endswith(".meta") or name.startswith("."):
            continue
        path = os.path.join(dirpath, name)
        if os.path.exists(path + ".meta"):
            continue
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        guid = hashlib.md5(f"{PACKAGE}/{rel}".encode()).hexdigest()
        if os.path.isdir(path):
            body = "folderAsset: yes\nDefaultImporter:\n  externalObjects: {}\n"
        else:
            body = IMPORTER.get(os.path.splitext(name)[1], "DefaultImporter:\n  externalObjects: {}\n")
        with open(path + ".meta", "w", newline="\n") as f:
            f.write(f"fileFormatVersion: 2\nguid: {guid}\n{body}{TAIL}")
        written += 1
        print(f"wrote {rel}.meta")
print(f"{written} .meta files written")

#!/usr/bin/env bash
# The action's first step: the released `unity-conformance` and
# `unity-mcp-bridge` for this runner, their SHA-256 checked against the
# release's SHA256SUMS (a file that does not match, or is not listed, stops
# the job), into $RUNNER_TEMP; and, for `target: mono`, mono.
#
# Environment (action.yml sets it): ACTION_HOME (the action's checkout),
# INPUT_VERSION, INPUT_DOWNLOAD_FROM, INPUT_TARGET; GitHub's RUNNER_OS,
# RUNNER_ARCH, RUNNER_TEMP, GITHUB_OUTPUT.
set -euo pipefail
home=$(cd "$ACTION_HOME" && pwd)
say() { echo "unity-conformance action: $*"; }
die() { echo "::error title=Unity MCP conformance::$*"; exit 1; }

version=${INPUT_VERSION:-}
[ -n "$version" ] || version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$home/Cargo.toml" | head -1)
version=${version#v}
[ -n "$version" ] || die "no version given and none in $home/Cargo.toml"

case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
    Linux/X64) triple=x86_64-unknown-linux-musl;;
    Linux/ARM64) triple=aarch64-unknown-linux-musl;;
    macOS/X64) triple=x86_64-apple-darwin;;
    macOS/ARM64) triple=aarch64-apple-darwin;;
    Windows/X64) triple=x86_64-pc-windows-msvc;;
    *) die "no prebuilt suite for the runner ${RUNNER_OS:-?} ${RUNNER_ARCH:-?} (Linux x64/arm64, macOS x64/arm64, Windows x64)";;
esac
exe=; [ "$RUNNER_OS" = Windows ] && exe=.exe

from=${INPUT_DOWNLOAD_FROM:-}
if [ -z "$from" ]; then
    repository=$(sed -n 's/^repository = "\(.*\)"$/\1/p' "$home/Cargo.toml" | head -1)
    from="$repository/releases/download/v$version"
fi
dest="${RUNNER_TEMP:?}/unity-conformance-$version"
rm -rf "$dest" && mkdir -p "$dest"
fetch() { # fetch NAME: from the release into $dest
    case "$from" in
        http://*|https://*) curl -fsSL --retry 3 --retry-delay 2 -o "$dest/$1" "$from/$1" || die "cannot download $from/$1";;
        file://*) cp "${from#file://}/$1" "$dest/$1" 2>/dev/null || die "no $1 in ${from#file://}";;
        *) cp "$from/$1" "$dest/$1" 2>/dev/null || die "no $1 in $from";;
    esac
}
sha256() {
    if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

say "version $version for $triple, from $from"
fetch SHA256SUMS
for name in "unity-conformance-$version-$triple$exe" "unity-mcp-bridge-$version-$triple$exe"; do
    fetch "$name"
    expected=$(awk -v n="$name" '{ f = $2; sub(/^\*/, "", f) } f == n { print $1 }' "$dest/SHA256SUMS")
    [ -n "$expected" ] || die "$name is not in the release's SHA256SUMS: not installed"
    actual=$(sha256 "$dest/$name")
    [ "$actual" = "$expected" ] || die "$name does not match the release's SHA256SUMS (expected $expected, got $actual): not installed"
    chmod +x "$dest/$name"
    say "$name: sha256 $actual (matches SHA256SUMS)"
done
suite="$dest/unity-conformance-$version-$triple$exe"
bridge="$dest/unity-mcp-bridge-$version-$triple$exe"
said=$("$suite" --version) || die "$suite does not run on this runner"
[ "$said" = "unity-conformance $version" ] || die "$suite says it is $said, not $version"
said=$("$bridge" --version) || die "$bridge does not run on this runner"
[ "$said" = "unity-mcp-bridge $version" ] || die "$bridge says it is $said, not $version"

if [ "${INPUT_TARGET:-}" = mono ]; then
    [ "$RUNNER_OS" = Linux ] || die "target mono needs a Linux runner (Debian's or Ubuntu's mono packages); use target unity elsewhere"
    if ! command -v mcs >/dev/null || ! find /usr/lib/cli /usr/lib/mono -name Newtonsoft.Json.dll 2>/dev/null | grep -q . \
        || ! find /usr/lib/mono-cecil /usr/lib/cli /usr/lib/mono -name Mono.Cecil.dll 2>/dev/null | grep -q .; then
        say "installing mono (mono-mcs, Newtonsoft.Json, Mono.Cecil)"
        sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -qq
        $sudo apt-get install -y -qq --no-install-recommends mono-mcs mono-runtime libnewtonsoft-json-cil-dev libmono-cecil-cil-dev python3 >/dev/null
    fi
    say "$(mcs --version)"
fi

{
    echo "suite=$suite"
    echo "bridge=$bridge"
    echo "version=$version"
} >> "$GITHUB_OUTPUT"

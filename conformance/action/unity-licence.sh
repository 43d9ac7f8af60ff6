#!/usr/bin/env bash
# unity-licence.sh activate|return UNITY: a Unity licence for batch mode,
# from UNITY_LICENSE (a .ulf file's contents, written where Unity reads it
# on this OS) or UNITY_SERIAL with UNITY_EMAIL and UNITY_PASSWORD
# (activated with the Editor, and returned at the end). With neither, the
# Editor is taken to be activated already.
set -euo pipefail
what=$1 unity=$2
case "$what" in
    activate)
        if [ -n "${UNITY_LICENSE:-}" ]; then
            case "$(uname -s)" in
                Linux) dir="$HOME/.local/share/unity3d/Unity";;
                Darwin) dir="/Library/Application Support/Unity";;
                *) dir="${PROGRAMDATA:-C:/ProgramData}/Unity";;
            esac
            mkdir -p "$dir" 2>/dev/null || sudo mkdir -p "$dir"
            printf '%s' "$UNITY_LICENSE" > "$dir/Unity_lic.ulf" 2>/dev/null \
                || printf '%s' "$UNITY_LICENSE" | sudo tee "$dir/Unity_lic.ulf" >/dev/null
            echo "unity-conformance action: the licence file is in $dir"
        elif [ -n "${UNITY_SERIAL:-}" ]; then
            echo "unity-conformance action: activating the serial"
            "$unity" -batchmode -nographics -quit -logFile - \
                -serial "$UNITY_SERIAL" -username "${UNITY_EMAIL:-}" -password "${UNITY_PASSWORD:-}" > /dev/null
        else
            echo "unity-conformance action: no unity-license or unity-serial: the Editor must be activated already"
        fi;;
    return)
        if [ -z "${UNITY_LICENSE:-}" ] && [ -n "${UNITY_SERIAL:-}" ]; then
            "$unity" -batchmode -nographics -quit -logFile - -returnlicense \
                -username "${UNITY_EMAIL:-}" -password "${UNITY_PASSWORD:-}" > /dev/null || true
        fi;;
    *) echo "usage: unity-licence.sh activate|return UNITY" >&2; exit 2;;
esac

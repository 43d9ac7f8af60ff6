#!/usr/bin/env bash
# The action's second step: the suite against the target, its reports into
# one folder (report.json, junit.xml, report.html, summary.md, the console
# log), the summary appended to the job's summary page, and the verdict as
# an output. It exits 0 whatever the verdict: the action's last step fails
# the job, after the reports are uploaded.
#
# Environment (action.yml sets it): ACTION_HOME, SUITE, BRIDGE, INPUT_*,
# UNITY_LICENSE / UNITY_SERIAL, UNITY_EMAIL, UNITY_PASSWORD; GitHub's
# RUNNER_OS, RUNNER_TEMP, GITHUB_WORKSPACE, GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY.
set -uo pipefail
home=$(cd "$ACTION_HOME" && pwd)
say() { echo "unity-conformance action: $*"; }
reports="${RUNNER_TEMP:?}/unity-conformance-reports"
rm -rf "$reports" && mkdir -p "$reports"
echo "reports=$reports" >> "$GITHUB_OUTPUT"

# The suite's data (the fixture project, its scenarios, the package it
# builds under mono) is the action's own checkout, at the binary's version.
export UNITY_CONFORMANCE_HOME=$home

args=(run --target "${INPUT_TARGET:-mono}" --profile "${INPUT_PROFILE:-auto}"
    --json "$reports/report.json" --junit "$reports/junit.xml"
    --html "$reports/report.html" --markdown "$reports/summary.md")
# The `mcp` cases drive the released bridge, the one users install; the
# suite's simulated Editor (`fake`) keeps its own.
[ "${INPUT_TARGET:-}" = fake ] || args+=(--bridge "$BRIDGE")
if [ -n "${INPUT_BASELINE:-}" ]; then
    [ -f "$INPUT_BASELINE" ] || { echo "::error title=Unity MCP conformance::the baseline $INPUT_BASELINE is not a file (paths are relative to the workspace)"; exit 1; }
    args+=(--baseline "$(cd "$(dirname "$INPUT_BASELINE")" && pwd)/$(basename "$INPUT_BASELINE")")
fi
# Words, as the inputs say, never file names: `mcp.*` is the suite's glob,
# not the shell's (set -f, or a file in the workspace would replace it).
set -f
for glob in ${INPUT_FILTER:-}; do args+=(--filter "$glob"); done
# shellcheck disable=SC2206 # words, as the input says
extra=(${INPUT_ARGUMENTS:-})
set +f
args+=(${extra[@]+"${extra[@]}"})

in_container=()
if [ "${INPUT_TARGET:-}" = unity ]; then
    if [ -n "${INPUT_PROJECT:-}" ]; then
        args+=(--project "$(cd "$INPUT_PROJECT" && pwd)")
    fi
    args+=(--unity-timeout "$(( ${INPUT_TIMEOUT_MINUTES:-15} * 60 ))")
    if [ -n "${INPUT_UNITY_PATH:-}" ]; then
        args+=(--unity "$INPUT_UNITY_PATH")
        bash "$home/conformance/action/unity-licence.sh" activate "$INPUT_UNITY_PATH" || exit 1
    elif [ -n "${INPUT_UNITY_VERSION:-}" ]; then
        [ "$RUNNER_OS" = Linux ] || { echo "::error title=Unity MCP conformance::unity-version runs game.ci's Linux images: on $RUNNER_OS give unity-path"; exit 1; }
        image="unityci/editor:ubuntu-$INPUT_UNITY_VERSION-base-3"
        say "Unity $INPUT_UNITY_VERSION from $image"
        docker pull -q "$image" || { echo "::error title=Unity MCP conformance::cannot pull $image (is $INPUT_UNITY_VERSION a version game.ci publishes?)"; exit 1; }
        args+=(--unity /usr/bin/unity-editor)
        # The same paths inside as outside: the workspace, the suite, the
        # action's checkout, the reports.
        in_container=(docker run --rm -i
            -v "$GITHUB_WORKSPACE:$GITHUB_WORKSPACE" -v "$RUNNER_TEMP:$RUNNER_TEMP" -v "$home:$home" -w "$PWD"
            -e UNITY_CONFORMANCE_HOME -e UNITY_LICENSE -e UNITY_SERIAL -e UNITY_EMAIL -e UNITY_PASSWORD
            "$image" bash "$home/conformance/action/in-container.sh")
    else
        echo "::error title=Unity MCP conformance::target unity needs unity-version (Linux runners) or unity-path"
        exit 1
    fi
fi

say "${in_container[*]:+(in $image) }$SUITE ${args[*]}"
code=0
${in_container[@]+"${in_container[@]}"} "$SUITE" "${args[@]}" 2>&1 | tee "$reports/console.log" || code=${PIPESTATUS[0]}
[ ${#in_container[@]} -eq 0 ] && [ -n "${INPUT_UNITY_PATH:-}" ] && bash "$home/conformance/action/unity-licence.sh" return "$INPUT_UNITY_PATH"

case $code in
    0) verdict=passed;;
    1) verdict=failed;;
    *) verdict=could-not-test;;
esac
summary=$(grep -E '^unity-conformance against .*: [0-9]+ cases:' "$reports/console.log" | tail -n 1 | sed -E 's/.*: ([0-9]+ cases: )/\1/')
[ -n "$summary" ] || summary="no cases ran (exit $code)"
{
    echo "verdict=$verdict"
    echo "summary=$summary"
} >> "$GITHUB_OUTPUT"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    if [ -s "$reports/summary.md" ]; then
        cat "$reports/summary.md" >> "$GITHUB_STEP_SUMMARY"
    else
        {
            echo "### unity-conformance: could not test (exit $code)"
            echo
            echo '```text'
            tail -n 30 "$reports/console.log"
            echo '```'
        } >> "$GITHUB_STEP_SUMMARY"
    fi
    echo "" >> "$GITHUB_STEP_SUMMARY"
    echo "The reports (JSON, JUnit, and report.html to open in a browser) are in the artifact of this job." >> "$GITHUB_STEP_SUMMARY"
fi
say "verdict: $verdict ($summary)"
exit 0

#!/usr/bin/env bash
# Inside game.ci's Unity image (run.sh starts it): the licence activated,
# the suite run with the arguments given, the licence returned.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/unity-licence.sh" activate /usr/bin/unity-editor || exit 2
code=0
"$@" || code=$?
bash "$here/unity-licence.sh" return /usr/bin/unity-editor
exit $code

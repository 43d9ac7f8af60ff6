"""Runs a composite GitHub Action (action.yml) on this machine the way the
Actions runner does, for `.ci/action`: the inputs with their defaults, the
contexts the action reads (github.action_path, github.workspace, runner.*,
steps.<id>.outputs.*), each `run:` step with `shell: bash` as
`bash --noprofile --norc -eo pipefail FILE`, GITHUB_OUTPUT / GITHUB_ENV /
GITHUB_PATH / GITHUB_STEP_SUMMARY files per step, `if:` conditions
(success() by default; always(), ==, != and &&), a failed step skipping the
later ones that do not ask for always(), and `actions/upload-artifact`
copying its files into an artifacts folder. Anything else an action might
use (another `uses:`, another expression) stops it with an error rather
than being run wrongly.

usage: action-runner.py ACTION_DIR --workspace DIR --temp DIR --artifacts DIR
       [--summary FILE] [--input NAME=VALUE ...]
Exits 0 if the job succeeded, 1 if it failed.
"""
import argparse, os, re, shutil, subprocess, sys, tempfile
import yaml

parser = argparse.ArgumentParser()
parser.add_argument("action")
parser.add_argument("--workspace", required=True)
parser.add_argument("--temp", required=True)
parser.add_argument("--artifacts", required=True)
parser.add_argument("--summary")
parser.add_argument("--input", action="append", default=[])
args = parser.parse_args()

action_dir = os.path.abspath(args.action)
action = yaml.safe_load(open(os.path.join(action_dir, "action.yml")))
assert action["runs"]["using"] == "composite", "only composite actions"
inputs = {name: str(spec.get("default", "")) for name, spec in action.get("inputs", {}).items()}
for item in args.input:
    name, _, value = item.partition("=")
    if name not in inputs:
        sys.exit(f"action-runner: the action has no input {name!r}")
    inputs[name] = value

os.makedirs(args.temp, exist_ok=True)
os.makedirs(args.artifacts, exist_ok=True)
steps = {}  # id -> {"outputs": {...}, "outcome": ...}
job_env = {}
job_path = []
summary_parts = []


class Unsupported(Exception):
    pass


def context(ref):
    ref = ref.strip()
    if ref.startswith("'") and ref.endswith("'"):
        return ref[1:-1].replace("''", "'")
    parts = ref.split(".")
    if parts[0] == "inputs" and len(parts) == 2:
        if parts[1] not in inputs:
            raise Unsupported(f"no input {parts[1]}")
        return inputs[parts[1]]
    if ref == "github.action_path":
        return action_dir
    if ref == "github.workspace":
        return os.path.abspath(args.workspace)
    if ref == "runner.os":
        return "Linux"
    if ref == "runner.arch":
        return "X64"
    if ref == "runner.temp":
        return os.path.abspath(args.temp)
    if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
        return steps.get(parts[1], {}).get("outputs", {}).get(parts[3], "")
    raise Unsupported(f"the expression {ref!r}")


def substitute(text):
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: context(m.group(1)), str(text))


def condition(expr, failed):
    """success() unless told; always(); A == B; A != B; terms joined by &&."""
    if expr is None:
        return not failed
    expr = str(expr).strip()
    if expr.startswith("${{") and expr.endswith("}}"):
        expr = expr[3:-2].strip()
    result, asked_status = True, False
    for term in expr.split("&&"):
        term = term.strip()
        if term == "always()":
            asked_status = True
        elif term == "success()":
            asked_status = True
            result = result and not failed
        elif term == "failure()":
            asked_status = True
            result = result and failed
        elif m := re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", term):
            a, op, b = context(m.group(1)), m.group(2), context(m.group(3))
            result = result and ((a == b) if op == "==" else (a != b))
        else:
            raise Unsupported(f"the condition {term!r}")
    return result and (asked_status or not failed)


def read_file_commands(path):
    """GITHUB_OUTPUT / GITHUB_ENV: NAME=VALUE lines, or NAME<<DELIMITER blocks."""
    values = {}
    if not os.path.exists(path):
        return values
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            i += 1
            while i < len(lines) and lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


failed = False
for n, step in enumerate(action["runs"]["steps"], 1):
    name = substitute(step.get("name", step.get("id", f"step {n}")))
    if not condition(step.get("if"), failed):
        print(f"::: {name}: skipped")
        continue
    print(f"::: {name}", flush=True)
    outcome = "success"
    if "uses" in step:
        if not step["uses"].startswith("actions/upload-artifact@"):
            raise Unsupported(f"uses: {step['uses']}")
        with_ = {k: substitute(v) for k, v in step.get("with", {}).items()}
        dest = os.path.join(args.artifacts, with_["name"])
        shutil.rmtree(dest, ignore_errors=True)
        source = with_["path"]
        if os.path.isdir(source):
            shutil.copytree(source, dest)
        elif os.path.isfile(source):
            os.makedirs(dest)
            shutil.copy(source, dest)
        elif with_.get("if-no-files-found", "warn") == "error":
            outcome = "failure"
        print(f"    artifact {with_['name']}: " + ", ".join(sorted(os.listdir(dest)) if os.path.isdir(dest) else []))
    else:
        if step.get("shell") != "bash":
            raise Unsupported(f"shell {step.get('shell')!r}")
        files = {}
        for kind in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"):
            fd, files[kind] = tempfile.mkstemp(prefix=kind.lower() + "-", dir=args.temp)
            os.close(fd)
        env = dict(os.environ)
        env.update(job_env)
        if job_path:
            env["PATH"] = os.pathsep.join(job_path + [env["PATH"]])
        env.update({
            "CI": "true", "GITHUB_ACTIONS": "true", "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64",
            "RUNNER_TEMP": os.path.abspath(args.temp), "GITHUB_WORKSPACE": os.path.abspath(args.workspace),
            "GITHUB_ACTION_PATH": action_dir, **files,
        })
        env.update({k: substitute(v) for k, v in step.get("env", {}).items()})
        fd, script = tempfile.mkstemp(suffix=".sh", dir=args.temp)
        with os.fdopen(fd, "w") as f:
            f.write(substitute(step["run"]))
        code = subprocess.call(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                               cwd=args.workspace, env=env)
        if code != 0:
            print(f"    (exit {code})")
            outcome = "failure"
        steps[step.get("id", f"_{n}")] = {"outputs": read_file_commands(files["GITHUB_OUTPUT"]), "outcome": outcome}
        job_env.update(read_file_commands(files["GITHUB_ENV"]))
        job_path[:0] = [p for p in open(files["GITHUB_PATH"]).read().split("\n") if p]
        summary_parts.append(open(files["GITHUB_STEP_SUMMARY"], encoding="utf-8").read())
    failed = failed or outcome == "failure"

outputs = {name: substitute(spec["value"]) for name, spec in action.get("outputs", {}).items()}
print("::: outputs: " + ", ".join(f"{k}={v!r}" for k, v in outputs.items()))
summary = "".join(summary_parts)
if args.summary:
    open(args.summary, "w", encoding="utf-8").write(summary)
print(f"::: the job {'failed' if failed else 'succeeded'}")
sys.exit(1 if failed else 0)

//! Which Editor the bridge finds, started the way agents start it
//! (docs/bridge.md, "Which Editor"): outside every project with one Editor
//! open (used), with two (never a guess: the call says which are open and
//! how to choose, and the agent chooses with `select-unity-editor`), with
//! none; in a project no Unity has open (said at once), in one whose Unity
//! is starting (waited for); a socket it may not use (said at once, with the
//! reason). Each case starts its own Editors — the embedded fake, entered
//! in a registry of open Editors of the case's own, as the package enters
//! itself in the user's — and a bridge in a folder of its own.
//!
//! "At once" is judged against the call's own deadline: every call here
//! gives Unity [`PATIENT`] seconds, and must be answered within
//! [`AT_ONCE`]; a bridge that waits for an Editor that is not there takes
//! its whole deadline.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use editor_link::discovery::unity_path;
use fake_unity::{Config, FakeUnity};
use serde_json::{Value, json};

use super::text_of;
use crate::{
    bridge::McpProcess,
    case::{Case, CheckFuture, Level, Needs, Requires, check},
    did_it_run::check_meaning,
    ensure,
    finding::{Finding, violation},
    target::Session,
};

const REFERENCE: &str = "docs/bridge.md (which Editor); docs/editor-link-protocol.md §7";

/// The deadline every call gives Unity, seconds.
const PATIENT: u64 = 120;

/// How soon a call with nothing to wait for must be answered: a look takes
/// milliseconds (docs/benchmarks.md); this is a twelfth of [`PATIENT`].
const AT_ONCE: Duration = Duration::from_secs(10);

/// The bridge's tool to choose an Editor outside every project.
const SELECT: &str = "select-unity-editor";

pub fn cases() -> Vec<Case> {
    let case = |id: &'static str, requirement: &'static str, f: fn(Session) -> CheckFuture| Case {
        id: id.into(),
        requirement: requirement.into(),
        reference: REFERENCE,
        level: Level::Must,
        needs: Needs::Faults,
        requires: Requires::tools(&["get-logs"]),
        check: check(f),
    };
    vec![
        case(
            "mcp.which-editor.outside-one",
            "Started outside every Unity project with one Editor open, the bridge uses that Editor and says so in bridge-status (editorChoice).",
            outside_one,
        ),
        case(
            "mcp.which-editor.outside-several",
            "Started outside every Unity project with two Editors open, the bridge never guesses: tools/list answers (offering select-unity-editor), a call is answered at once, not run, naming both open projects and how to choose; once the agent chooses one with select-unity-editor, calls go to that Editor only, and bridge-status shows the choice.",
            outside_several,
        ),
        case(
            "mcp.which-editor.outside-none",
            "Started outside every Unity project with no Editor open, the bridge answers a call at once (not at its deadline), saying no Editor is open and that the call did not run.",
            outside_none,
        ),
        case(
            "mcp.which-editor.not-running",
            "In a project no Unity has open (its Library/MCPInstance.json names a dead process, as a crash leaves it), a call is answered at once (not at its deadline): Unity is not running with the project, and the call did not run.",
            not_running,
        ),
        case(
            "mcp.which-editor.starting",
            "In a project whose Unity is starting (its Library/EditorInstance.json names the live process; the package listens 3 s later), a call waits for it and succeeds.",
            starting,
        ),
        case(
            "mcp.which-editor.refused",
            "A socket the bridge may not use (in a folder others may write) is refused, and a call is answered at once with the reason, not run.",
            refused,
        ),
    ]
}

/// Where a case's Editors and bridge live: a registry of open Editors and a
/// folder of uLoopMCP 3 sockets of its own (so nothing of the machine's
/// counts), projects, and a folder that is no project.
struct Room {
    dir: tempfile::TempDir,
}

impl Room {
    fn new() -> Result<Room, Finding> {
        let dir = tempfile::tempdir().map_err(|e| Finding::Harness(format!("a temporary folder: {e}")))?;
        let room = Room { dir };
        for folder in [room.sockets(), room.outside()] {
            std::fs::create_dir_all(&folder).map_err(|e| Finding::Harness(format!("{}: {e}", folder.display())))?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(room.sockets(), std::fs::Permissions::from_mode(0o700))
                .map_err(|e| Finding::Harness(e.to_string()))?;
        }
        Ok(room)
    }

    fn registry(&self) -> PathBuf {
        self.dir.path().join("editors")
    }

    fn sockets(&self) -> PathBuf {
        self.dir.path().join("uloop")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// A Unity project folder called `name`.
    fn project(&self, name: &str) -> Result<PathBuf, Finding> {
        let project = self.dir.path().join(name);
        for folder in ["Assets", "ProjectSettings"] {
            std::fs::create_dir_all(project.join(folder)).map_err(|e| Finding::Harness(e.to_string()))?;
        }
        std::fs::canonicalize(&project).map_err(|e| Finding::Harness(e.to_string()))
    }

    /// A fake Editor of the package on `project` in a process of its own
    /// (`fake serve`: an Editor is a process, and the registry knows it by
    /// its process), entered in the registry.
    async fn served(&self, s: &Session, project: &Path) -> Result<Served, Finding> {
        use tokio::io::AsyncBufReadExt;
        let program = s.suite_program()?;
        let mut child = tokio::process::Command::new(&program)
            .args(["fake", "serve", "--port", "0", "--seed", "46", "--project"])
            .arg(project)
            .arg("--registry")
            .arg(self.registry())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| Finding::Harness(format!("{} fake serve: {e}", program.display())))?;
        let mut line = String::new();
        let out = child.stdout.take().ok_or_else(|| Finding::Harness("fake serve: no stdout".into()))?;
        let mut out = tokio::io::BufReader::new(out);
        match tokio::time::timeout(AT_ONCE, out.read_line(&mut line)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => {
                return Err(Finding::Harness(format!(
                    "fake serve --project {} printed no listening line",
                    project.display()
                )));
            }
        }
        let listening: Value =
            serde_json::from_str(&line).map_err(|e| Finding::Harness(format!("its listening line {line:?}: {e}")))?;
        let control = listening["control"]
            .as_str()
            .and_then(|url| fake_unity::ControlClient::from_url(url).ok())
            .ok_or_else(|| Finding::Harness(format!("its listening line has no control API: {line}")))?;
        Ok(Served { _child: child, control })
    }

    /// A fake Editor of the package on `project`, entered in the registry.
    async fn editor(&self, project: &Path, adjust: impl FnOnce(&mut Config)) -> Result<FakeUnity, Finding> {
        let mut config = Config::new(project);
        config.seed = Some(46);
        config.registry = Some(self.registry());
        adjust(&mut config);
        FakeUnity::start(config).await.map_err(|e| Finding::Harness(format!("starting a fake Editor: {e}")))
    }

    /// What the bridge is started with: this room's registry and sockets,
    /// and no port asked but the ones its Editors publish.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UNITY_MCP_EDITORS_DIR", self.registry().display().to_string()),
            ("UNITY_MCP_ULOOP3_SOCKETS", self.sockets().display().to_string()),
            ("UNITY_MCP_SCAN_PORTS", String::new()),
        ]
    }

    fn bridge(&self, s: &Session, folder: &Path, args: &[&str]) -> Result<McpProcess, Finding> {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        s.mcp_in(folder, args, &env)
    }
}

/// A fake Editor in a process of its own, killed when dropped.
struct Served {
    _child: tokio::process::Child,
    control: fake_unity::ControlClient,
}

impl Served {
    /// How many times `tool` ran in it.
    async fn runs(&self, tool: &str) -> Result<u64, Finding> {
        let stats = self.control.get("/stats").await.map_err(|e| Finding::Harness(format!("its control API: {e}")))?;
        Ok(stats["runs"][tool].as_u64().unwrap_or(0))
    }
}

/// Only the embedded fake: the case starts Editors of its own.
fn own_editors(s: &Session) -> Result<(), Finding> {
    match s.is_embedded_fake() {
        true => Ok(()),
        false => Err(Finding::NotApplicable(
            "not applicable: the case starts Editors of its own, which only the simulated Editor plays (run it against the embedded fake)".into(),
        )),
    }
}

/// `get-logs` with [`PATIENT`] seconds, which must be answered within
/// [`AT_ONCE`] with an error saying it did not run; the error's text.
async fn refused_at_once(mcp: &mut McpProcess) -> Result<String, Finding> {
    let id = mcp.request("tools/call", json!({"name": "get-logs", "arguments": {"TimeoutSeconds": PATIENT}})).await?;
    let answer = match mcp.response_within(&id, AT_ONCE).await {
        Ok(answer) => answer,
        Err(Finding::Violation(why)) => {
            return violation(format!(
                "a call with nothing to wait for was not answered within {AT_ONCE:?} (its deadline is {PATIENT} s): {why}"
            ));
        }
        Err(other) => return Err(other),
    };
    let said = text_of(&answer);
    ensure!(answer["result"]["isError"] == true, "the call was not refused: {answer}");
    check_meaning(&said, fake_unity::scenario::Meaning::DidNotRun).map_err(Finding::Violation)?;
    Ok(said)
}

/// How many times `tool` ran in `fake`.
fn calls(fake: &FakeUnity, tool: &str) -> u64 {
    fake.editor().stats.runs(tool)
}

/// `bridge-status`'s structured content.
async fn status(mcp: &mut McpProcess) -> Result<Value, Finding> {
    let result = mcp.call_ok("bridge-status", json!({})).await?;
    Ok(result["structuredContent"].clone())
}

fn outside_one(s: Session) -> CheckFuture {
    Box::pin(async move {
        own_editors(&s)?;
        let room = Room::new()?;
        let project = room.project("Game")?;
        let editor = room.served(&s, &project).await?;
        let mut mcp = room.bridge(&s, &room.outside(), &[])?;
        mcp.initialize().await?;
        mcp.call_ok("get-logs", json!({"TimeoutSeconds": PATIENT})).await?;
        ensure!(editor.runs("get-logs").await? == 1, "the call did not reach the one open Editor");
        let status = status(&mut mcp).await?;
        let how = status["editorChoice"]["how"].as_str().unwrap_or("");
        ensure!(how.contains("only open Editor"), "bridge-status does not say the one open Editor is used: {status}");
        s.note(format!("bridge-status: {}", status["editorChoice"]));
        mcp.finish().await
    })
}

fn outside_several(s: Session) -> CheckFuture {
    Box::pin(async move {
        own_editors(&s)?;
        let room = Room::new()?;
        let (a, b) = (room.project("GameA")?, room.project("GameB")?);
        let first = room.served(&s, &a).await?;
        let second = room.served(&s, &b).await?;
        let mut mcp = room.bridge(&s, &room.outside(), &[])?;
        mcp.initialize().await?;
        let tools = mcp.list_tools().await?;
        ensure!(
            tools.iter().any(|t| t["name"] == SELECT),
            "tools/list does not offer {SELECT} outside every project: {:?}",
            tools.iter().map(|t| &t["name"]).collect::<Vec<_>>()
        );
        let said = refused_at_once(&mut mcp).await?;
        let ran = first.runs("get-logs").await? + second.runs("get-logs").await?;
        ensure!(ran == 0, "with two Editors open the call ran in one of them ({ran} times): a guess");
        for project in [&a, &b] {
            let shown = unity_path(project);
            ensure!(said.contains(&shown), "the answer does not name the open project {shown}: {said}");
        }
        ensure!(said.contains(SELECT) && said.contains("--project"), "the answer does not say how to choose: {said}");
        s.note(format!("said: {said}"));
        let chosen = mcp.call_ok(SELECT, json!({"project": "GameB"})).await?;
        let picked = chosen["structuredContent"]["chosen"].as_str().map(|p| unity_path(Path::new(p)));
        ensure!(picked == Some(unity_path(&b)), "{SELECT} GameB chose otherwise: {chosen}");
        mcp.call_ok("get-logs", json!({"TimeoutSeconds": PATIENT})).await?;
        let (in_a, in_b) = (first.runs("get-logs").await?, second.runs("get-logs").await?);
        ensure!(in_a == 0 && in_b == 1, "after choosing GameB the call ran in GameA {in_a} times, in GameB {in_b}");
        let status = status(&mut mcp).await?;
        ensure!(
            status["editorChoice"]["how"].as_str().is_some_and(|h| h.contains(SELECT))
                && status["project"].as_str().is_some_and(|p| unity_path(Path::new(p)) == unity_path(&b)),
            "bridge-status does not show the choice: {status}"
        );
        mcp.finish().await
    })
}

fn outside_none(s: Session) -> CheckFuture {
    Box::pin(async move {
        own_editors(&s)?;
        let room = Room::new()?;
        let mut mcp = room.bridge(&s, &room.outside(), &[])?;
        mcp.initialize().await?;
        let said = refused_at_once(&mut mcp).await?;
        ensure!(said.contains("No Unity Editor is open"), "the answer does not say no Editor is open: {said}");
        s.note(format!("said: {said}"));
        mcp.finish().await
    })
}

fn not_running(s: Session) -> CheckFuture {
    Box::pin(async move {
        own_editors(&s)?;
        let room = Room::new()?;
        let project = room.project("Game")?;
        // A crashed Editor's leftovers: its discovery file naming a dead process.
        fake_unity::editor::leave_crashed_discovery(&project).map_err(|e| Finding::Harness(e.to_string()))?;
        let mut mcp = room.bridge(&s, &project, &[])?;
        mcp.initialize().await?;
        let said = refused_at_once(&mut mcp).await?;
        ensure!(said.contains("not running"), "the answer does not say Unity is not running: {said}");
        s.note(format!("said: {said}"));
        mcp.finish().await
    })
}

fn starting(s: Session) -> CheckFuture {
    Box::pin(async move {
        own_editors(&s)?;
        let room = Room::new()?;
        let project = room.project("Game")?;
        let fake = room.editor(&project, |c| c.scenario.start_delay_ms = 3000).await?;
        let mut mcp = room.bridge(&s, &project, &[])?;
        mcp.initialize().await?;
        mcp.call_ok("get-logs", json!({"TimeoutSeconds": PATIENT})).await?;
        ensure!(calls(&fake, "get-logs") == 1, "the call did not reach the Editor once it listened");
        mcp.finish().await
    })
}

fn refused(s: Session) -> CheckFuture {
    Box::pin(async move {
        own_editors(&s)?;
        if !cfg!(unix) {
            return Err(Finding::NotApplicable("not applicable: Unix domain sockets only".into()));
        }
        let room = Room::new()?;
        let project = room.project("Game")?;
        let shared = room.dir.path().join("shared");
        std::fs::create_dir_all(&shared).map_err(|e| Finding::Harness(e.to_string()))?;
        let socket = shared.join("UnityCliLoop-0000000000000000.sock");
        let _editor = room
            .editor(&project, |c| {
                c.editor = fake_unity::EditorKind::Uloop3;
                c.endpoint = Some(editor_link::endpoint::Endpoint::Unix(socket.clone()));
            })
            .await?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Anyone may put a socket here: it cannot be trusted to be this user's Editor.
            std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777))
                .map_err(|e| Finding::Harness(e.to_string()))?;
        }
        let endpoint = format!("unix:{}", socket.display());
        let mut mcp = room.bridge(&s, &project, &["--endpoint", &endpoint])?;
        mcp.initialize().await?;
        let said = refused_at_once(&mut mcp).await?;
        ensure!(said.contains("not permitted"), "the answer does not give the reason: {said}");
        s.note(format!("said: {said}"));
        mcp.finish().await
    })
}

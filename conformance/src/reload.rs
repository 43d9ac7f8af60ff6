//! Domain reloads the cases cause.
//!
//! An Editor with a control API (the fakes, the package's headless host
//! started by the suite) is told to reload. Any other — a real Unity in batch
//! mode, uLoopMCP's Editors, the host served without its control API — is
//! reloaded the way a user's agent reloads it: a script of the suite's
//! written into the project's `Assets/`, then `compile` (new assemblies:
//! Unity reloads the domain before it answers), and the Editor waited for as
//! a client waits, until it accepts a connection and answers again. After
//! the case the runner removes the script and compiles it away
//! ([`restore`]), so the next case meets the project as it was.
//!
//! What only a control API can ask for (a port move, tools registered a
//! known time after the Editor listens, a quit, a fault) stays with the
//! cases that need it: [`crate::case::Needs::Control`] names it.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use editor_link::{discovery::EditorState, framing::Framing};
use serde_json::{Value, json};

use crate::{
    editor_client::{EditorClient, Read},
    finding::Finding,
    target::{Session, Target},
    wire_log::WireLog,
};

/// The script whose changes make the Editor reload (its `.meta`, which
/// Unity writes beside it, goes with it).
pub const RELOAD_SCRIPT: &str = "Assets/UnityConformanceReload.cs";

/// How long a reload the real way may take, from `compile` to the Editor
/// answering again: Unity compiles the project's assemblies first, and a
/// large project takes tens of seconds.
pub const RELOAD_DEADLINE: Duration = Duration::from_secs(120);

/// How this Editor is reloaded.
#[derive(Clone, Debug)]
pub enum Way {
    /// Through its control API.
    Control(fake_unity::control::ControlClient),
    /// With its own `compile`, after a change to a script of `project`.
    Script { project: PathBuf },
}

impl Session {
    /// How a case reloads this Editor: its control API if it has one, else
    /// the real way when its project is known.
    pub fn reload_way(&self) -> Result<Way, Finding> {
        match (&self.control, &self.project) {
            (Some(control), _) => Ok(Way::Control(control.clone())),
            (None, Some(project)) => Ok(Way::Script { project: project.clone() }),
            (None, None) => Err(Finding::NotApplicable(CANNOT_RELOAD.into())),
        }
    }

    /// Starts a domain reload and returns once it is under way (the
    /// Editor closed its connections, or its control API took the request):
    /// what the case's own connections see is the case's to check.
    pub async fn begin_reload(&self) -> Result<(), Finding> {
        match self.reload_way()? {
            Way::Control(control) => {
                // Away long enough that a call made just after waits for it.
                control.post("/reload", json!({"downtimeMs": 1000})).await.map_err(control_failed)?;
                Ok(())
            }
            Way::Script { project } => compile_changed_script(self, &project).await,
        }
    }

    /// Reloads the domain and returns once the Editor answers again.
    pub async fn reload_and_wait(&self) -> Result<(), Finding> {
        match self.reload_way()? {
            Way::Control(control) => {
                // Long enough for a reader of the discovery file to see it
                // say reloading.
                control.reload(300, false).await.map_err(control_failed)?;
                Ok(())
            }
            Way::Script { project } => {
                compile_changed_script(self, &project).await?;
                back_after_reload(self, &project).await
            }
        }
    }
}

pub use crate::target::CANNOT_RELOAD;

fn control_failed(e: impl std::fmt::Display) -> Finding {
    Finding::Harness(format!("reload through the control API: {e}"))
}

/// Writes the reload script into `project` with contents it never had, so
/// that the next compile has new assemblies to load (a domain reload); the
/// stamp it carries.
pub fn write_script(project: &Path) -> Result<u128, Finding> {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let source = format!(
        "// Written by unity-conformance to make Unity reload its scripts, as an agent's edit does;\n\
         // removed after the case. If it is still here, no run is under way: delete it.\n\
         internal static class UnityConformanceReload {{ internal const string Stamp = \"{stamp}\"; }}\n"
    );
    let path = project.join(RELOAD_SCRIPT);
    std::fs::write(&path, source).map_err(|e| Finding::Harness(format!("writing {}: {e}", path.display())))?;
    Ok(stamp)
}

/// Removes the reload script (and the `.meta` Unity wrote beside it).
pub fn remove_script(project: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(project.join(format!("{RELOAD_SCRIPT}.meta")));
    std::fs::remove_file(project.join(RELOAD_SCRIPT))
}

/// Writes the reload script, sends `compile`, and waits until the domain
/// reload closes that connection.
async fn compile_changed_script(s: &Session, project: &Path) -> Result<(), Finding> {
    let stamp = write_script(project)?;
    s.note(format!("wrote {RELOAD_SCRIPT} (stamp {stamp}); compile, to reload the domain"));
    let mut link = s.link(Framing::Header).await?;
    let id = link.request("compile", json!({})).await?;
    match closed_or_answered(&mut link, &id).await {
        Ended::Closed => Ok(()),
        Ended::Answered(answer) => Err(Finding::Harness(format!(
            "compile after a change to {RELOAD_SCRIPT} was answered without a domain reload, so the reload this case needs did not happen (is --project the folder this Editor has open?): {answer}"
        ))),
        Ended::Neither(why) => Err(Finding::Harness(format!(
            "compile after a change to {RELOAD_SCRIPT}: neither an answer nor a domain reload ({why})"
        ))),
    }
}

enum Ended {
    Closed,
    Answered(Value),
    Neither(String),
}

/// Reads `link` until the answer to `id` or the close, within [`RELOAD_DEADLINE`].
async fn closed_or_answered(link: &mut EditorClient, id: &Value) -> Ended {
    let deadline = tokio::time::Instant::now() + RELOAD_DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match link.receive(left).await {
            Read::Closed => return Ended::Closed,
            Read::Message(m) if m.get("id") == Some(id) => return Ended::Answered(m),
            // Progress, the shutdown notification, a list_changed.
            Read::Message(_) => {}
            Read::Silence => return Ended::Neither(format!("nothing within {RELOAD_DEADLINE:?}")),
            Read::NotJson(e) | Read::BadFraming(e) => return Ended::Neither(e),
        }
    }
}

/// Waits, as a client does, until the Editor accepts a connection and
/// answers its probe, and its discovery file (when it writes one) says
/// `ready` again.
async fn back_after_reload(s: &Session, project: &Path) -> Result<(), Finding> {
    let deadline = tokio::time::Instant::now() + RELOAD_DEADLINE;
    let mut last = String::new();
    while tokio::time::Instant::now() < deadline {
        let discovery = editor_link::discovery::DiscoveryFile::read(project).ok();
        let ready = discovery.is_none_or(|file| file.state == Some(EditorState::Ready));
        if ready {
            match answers(s).await {
                Ok(()) => return Ok(()),
                Err(finding) => last = finding.detail().to_owned(),
            }
        } else {
            last = "its discovery file does not say ready".into();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(Finding::Violation(format!(
        "the Editor did not answer again within {RELOAD_DEADLINE:?} of the domain reload its compile caused: {last}"
    )))
}

async fn answers(s: &Session) -> Result<(), Finding> {
    let mut link = s.link(Framing::Header).await?;
    link.probe_with("back").await.map(drop)
}

/// After a case against a shared Editor: if the case left the reload
/// script in the project, removes it and compiles it away (one more
/// reload), waiting until the Editor answers again. `Ok(false)` when there
/// was nothing to put back.
pub async fn restore(target: &Target, bridge: &crate::bridge::BridgeCommand) -> Result<bool, String> {
    let Target::Tcp(remote) = target else { return Ok(false) };
    let Some(project) = &remote.project else { return Ok(false) };
    let path = project.join(RELOAD_SCRIPT);
    if !path.exists() {
        return Ok(false);
    }
    remove_script(project).map_err(|e| format!("removing {}: {e}", path.display()))?;
    let session = target.open(WireLog::default(), bridge).await.map_err(|f| f.detail().to_owned())?;
    let deadline = tokio::time::Instant::now() + RELOAD_DEADLINE;
    // The Editor may still be reloading from the case: compile once it
    // answers; a compile cut off by a reload is sent again.
    loop {
        let attempt = async {
            let mut link = session.link(Framing::Header).await?;
            let id = link.request("compile", json!({})).await?;
            Ok::<_, Finding>(closed_or_answered(&mut link, &id).await)
        };
        match attempt.await {
            // Nothing left to compile: the project is as it was.
            Ok(Ended::Answered(_)) => return Ok(true),
            // It reloaded (or the connection went with a reload still under
            // way): once it is back, compiled again until it answers.
            Ok(Ended::Closed) if tokio::time::Instant::now() < deadline => {
                back_after_reload(&session, project).await.map_err(|f| f.detail().to_owned())?;
            }
            Ok(Ended::Closed) => {
                return Err(format!("compiling {RELOAD_SCRIPT} away: reloads for {RELOAD_DEADLINE:?}"));
            }
            Ok(Ended::Neither(why)) => return Err(format!("compiling {RELOAD_SCRIPT} away: {why}")),
            Err(_) if tokio::time::Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(200)).await,
            Err(finding) => return Err(format!("compiling {RELOAD_SCRIPT} away: {}", finding.detail())),
        }
    }
}

//! Which Editor the link is for, and whether there is one to wait for.
//!
//! - [`Place`]: a project (given, or the one the bridge started in); a port
//!   or endpoint pinned without a project; or anywhere — outside every
//!   project, where the open Editors decide: one is used (and said so),
//!   several are never guessed among, and the agent (a bridge tool) or the
//!   user (`--project`) chooses.
//! - [`Absence`]: what a look that found nothing to connect to can say for
//!   certain — Unity is not running with the project; no Editor is open;
//!   several are and none was chosen; the way in was refused — so a call is
//!   answered at once rather than at its deadline. Anything short of
//!   certain (Unity's own file names a live process, an Editor accepted and
//!   is silent, a connect timed out, a process that cannot be seen from
//!   here) is not an absence: calls wait, as for a Unity that is starting,
//!   reloading or importing.

use std::{
    path::{Path, PathBuf},
    time::Instant,
};

use serde::Serialize;

use editor_link::{
    discovery::{DiscoveryFile, EditorState, process_alive},
    endpoint::Endpoint,
    unity_instance::UnityInstance,
};

/// Which Editor the link is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// This project's Editor only.
    Project { project: PathBuf, how: ProjectFrom },
    /// The port or endpoint given, whatever project it has open.
    Pinned,
    /// Outside every project: the open Editors decide; `chosen` once one
    /// is (the only one open, or the agent's pick).
    Anywhere { chosen: Option<Chosen> },
}

/// How the project of [`Place::Project`] was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProjectFrom {
    /// `--project` (or the configuration that passed it).
    Given,
    /// The folder the bridge was started in, or one above it.
    WorkingDirectory,
}

/// The Editor chosen outside every project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub project: PathBuf,
    pub by: ChosenBy,
    /// The socket or pipe it was found at (uLoopMCP 3), when not a port.
    pub local: Option<Endpoint>,
}

/// Who chose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChosenBy {
    /// It was the only open Editor: used, and said so. Given up when it is
    /// no longer running, to look again.
    OnlyOpen,
    /// The agent picked it (`select-unity-editor`): kept for the session.
    Agent,
}

impl Place {
    /// The project whose Editor the link connects to now, if one is known.
    pub fn project(&self) -> Option<&Path> {
        match self {
            Place::Project { project, .. } | Place::Anywhere { chosen: Some(Chosen { project, .. }) } => Some(project),
            Place::Pinned | Place::Anywhere { chosen: None } => None,
        }
    }

    /// For status reports: `{"project", "how"}`.
    pub fn to_json(&self) -> serde_json::Value {
        let (project, how) = match self {
            Place::Project { project, how: ProjectFrom::Given } => (Some(project), "given (--project)"),
            Place::Project { project, how: ProjectFrom::WorkingDirectory } => (Some(project), "the working directory"),
            Place::Pinned => (None, "the port or endpoint given, without a project"),
            Place::Anywhere { chosen: None } => (None, "outside any project: none chosen yet"),
            Place::Anywhere { chosen: Some(Chosen { project, by: ChosenBy::OnlyOpen, .. }) } => {
                (Some(project), "outside any project: the only open Editor")
            }
            Place::Anywhere { chosen: Some(Chosen { project, by: ChosenBy::Agent, .. }) } => {
                (Some(project), "outside any project: chosen with select-unity-editor")
            }
        };
        serde_json::json!({"project": project.map(|p| p.display().to_string()), "how": how})
    }
}

/// One open Editor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenEditor {
    /// The project it has open, where this bridge can open it.
    pub project: PathBuf,
    pub unity_version: Option<String>,
    /// Its process, where it says.
    pub pid: Option<u32>,
    /// Where it listens (`port 8701`, `unix:/tmp/uloop/…`).
    pub endpoint: String,
    /// How it was found: `registry`, `uLoopMCP 3 socket`, `port scan`.
    pub found_by: String,
    /// The socket or pipe it listens on (uLoopMCP 3), to reach it there.
    #[serde(skip)]
    pub local: Option<Endpoint>,
}

impl OpenEditor {
    /// One line: `/home/me/GameA (Unity 6000.0.40f1, process 4242, port 8701)`.
    pub fn line(&self) -> String {
        let mut said = Vec::new();
        if let Some(v) = &self.unity_version {
            said.push(format!("Unity {v}"));
        }
        if let Some(pid) = self.pid {
            said.push(format!("process {pid}"));
        }
        said.push(self.endpoint.clone());
        format!("{} ({})", self.project.display(), said.join(", "))
    }
}

/// What a look that found nothing to connect to can say for certain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Absence {
    /// No Unity has the project open: no live process in its
    /// `Library/EditorInstance.json` or discovery file, and nothing
    /// answered where its Editor would listen.
    /// `other`: an Editor of another project answered where this one's
    /// would, and what it said.
    NotRunning { project: PathBuf, other: Option<String> },
    /// Outside every project, no Editor of this user is open.
    NoneOpen,
    /// Outside every project, several Editors are open and none was chosen.
    Several { editors: Vec<OpenEditor> },
    /// The way to the Editor was refused to this process (permission: a
    /// sandboxed shell; a socket or pipe of another user).
    Denied { why: String },
}

impl std::fmt::Display for Absence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Absence::NotRunning { project, .. } => write!(f, "Unity is not running with {}", project.display()),
            Absence::NoneOpen => f.write_str("no Unity Editor is open"),
            Absence::Several { editors } => write!(f, "{} Unity Editors are open and none was chosen", editors.len()),
            Absence::Denied { why } => write!(f, "not permitted to connect: {why}"),
        }
    }
}

impl Absence {
    /// Whether a call that waits on purpose (`--wait`,
    /// `wait-for-editor-ready`) waits it out: Unity may be opened meanwhile;
    /// a choice or a permission will not come by waiting.
    pub fn can_end_by_waiting(&self) -> bool {
        matches!(self, Absence::NotRunning { .. } | Absence::NoneOpen)
    }
}

/// The last look's conclusion, and when that look began.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub absence: Option<Absence>,
    pub looked_at: Instant,
}

/// What one round of connection attempts showed, by kind.
#[derive(Debug, Default)]
pub struct Round {
    /// A way in refused for permission, and why.
    pub denied: Option<String>,
    /// Something may be there: an Editor accepted and was silent, a
    /// connect timed out, a failure of no known kind.
    pub maybe_there: bool,
    /// An Editor of another project answered (or one that refused this
    /// bridge's token), and what it said.
    pub other_project: Option<String>,
}

/// Whether `project` has a Unity open, as far as its files tell: Unity's
/// own file, or the package's discovery file, names a live process (and
/// the package's has not said it stopped).
/// A file that is there but cannot be read (caught while being written)
/// says nothing for certain: it counts as open.
pub fn unity_has_open(project: &Path) -> bool {
    let unity = match UnityInstance::look(project) {
        Ok(found) => found.is_some_and(|i| process_alive(project, i.process_id)),
        Err(_) => true,
    };
    let package = match DiscoveryFile::read(project) {
        Ok(file) => file.state != Some(EditorState::Stopped) && process_alive(project, file.pid),
        Err(e) => !e.is_missing(),
    };
    unity || package
}

/// The verdict of a round in `project` that connected nowhere.
pub fn in_project(project: &Path, round: &Round) -> Option<Absence> {
    if let Some(why) = &round.denied {
        return Some(Absence::Denied { why: why.clone() });
    }
    if round.maybe_there || unity_has_open(project) {
        return None;
    }
    Some(Absence::NotRunning { project: project.to_owned(), other: round.other_project.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("Assets")).unwrap();
        dir
    }

    #[test]
    fn only_what_is_certain_is_an_absence() {
        let dir = project();
        let nothing = Round::default();
        let absent = in_project(dir.path(), &nothing);
        assert!(matches!(absent, Some(Absence::NotRunning { other: None, .. })), "{absent:?}");
        assert!(absent.unwrap().can_end_by_waiting());

        // Something may be there: a silent Editor, a connect that timed out.
        assert_eq!(in_project(dir.path(), &Round { maybe_there: true, ..Round::default() }), None);

        // Unity's own file names a live process: starting, importing, reloading.
        let unity =
            UnityInstance { process_id: std::process::id(), version: None, app_path: None, app_contents_path: None };
        unity.write(dir.path()).unwrap();
        assert_eq!(in_project(dir.path(), &nothing), None);
        // Caught while being written: nothing certain.
        std::fs::write(dir.path().join("Library/EditorInstance.json"), "{\"process_").unwrap();
        assert_eq!(in_project(dir.path(), &nothing), None);
        // …and a dead one, as a crash leaves it: not running.
        UnityInstance { process_id: i32::MAX as u32, ..unity }.write(dir.path()).unwrap();
        assert!(in_project(dir.path(), &nothing).is_some());

        // Refused for permission: said, whatever the files say.
        let denied = Round { denied: Some("unix:/x: owned by user 7".into()), maybe_there: true, ..Round::default() };
        let said = in_project(dir.path(), &denied).unwrap();
        assert!(matches!(&said, Absence::Denied { why } if why.contains("owned by user 7")), "{said:?}");
        assert!(!said.can_end_by_waiting(), "waiting does not grant a permission");
    }
}

//! The registry of open Editors: one small file per running Editor of this
//! user, in a folder of the user's own, so a client started outside any
//! project (a user-level MCP configuration, an IDE opened on a parent
//! folder) can find every open Editor — its project, Unity version, process
//! and port — and never has to guess among them.
//!
//! The package writes `<folder>/<pid>.json` whenever it writes its
//! discovery file, and deletes it when the Editor quits. An entry holds no
//! token and no session: it only says where to look. A client takes an
//! entry only when the entry and its folder are this user's and no one
//! else may write them, its process is alive, and the project's own
//! discovery file (`Library/MCPInstance.json`, the user's, mode 0600) names
//! the same process; what to connect to, and with which token, is then read
//! from the project as always.
//!
//! The folder: `UNITY_MCP_EDITORS_DIR` when set; else on Windows
//! `%LOCALAPPDATA%\UnityMcp\Editors`, on macOS `~/Library/Application
//! Support/UnityMcp/Editors`, elsewhere `$XDG_STATE_HOME/unity-mcp/editors`
//! (`~/.local/state/unity-mcp/editors`).

use std::{
    fs, io,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::discovery::{DiscoveryFile, EditorState, PROTOCOL_VERSION, pid_alive, write_atomic};

/// The variable that names the registry's folder (tests, unusual setups).
pub const FOLDER_VARIABLE: &str = "UNITY_MCP_EDITORS_DIR";

/// A larger entry is not one the package wrote.
const ENTRY_LIMIT: u64 = 64 * 1024;

/// One open Editor, as its entry says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub pid: u32,
    /// As Unity writes it (`C:/Users/me/Game` on Windows).
    pub project_path: String,
    pub port: u16,
    #[serde(default)]
    pub unity_version: Option<String>,
    #[serde(default)]
    pub package_version: Option<String>,
    #[serde(default)]
    pub protocol_version: Option<u32>,
    #[serde(default)]
    pub state: Option<EditorState>,
    #[serde(default)]
    pub updated_at: Option<String>,
}

impl Entry {
    /// The entry of the Editor whose discovery file is `file` (no token,
    /// no session).
    pub fn of(file: &DiscoveryFile) -> Entry {
        Entry {
            pid: file.pid,
            project_path: file.project_path.clone(),
            port: file.port,
            unity_version: file.unity_version.clone(),
            package_version: file.package_version.clone(),
            protocol_version: Some(PROTOCOL_VERSION),
            state: file.state,
            updated_at: file.updated_at.clone(),
        }
    }
}

/// The registry's folder.
pub fn folder() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(FOLDER_VARIABLE).filter(|d| !d.is_empty()) {
        return Some(dir.into());
    }
    let home = || std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA").map(|d| Path::new(&d).join("UnityMcp").join("Editors"))
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join("Library/Application Support/UnityMcp/Editors"))
    } else {
        let state = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
        state.or_else(|| home().map(|h| h.join(".local/state"))).map(|s| s.join("unity-mcp/editors"))
    }
}

/// Writes (or, once the Editor has stopped, deletes) the entry for `file`
/// in `dir`: the folder made private to its user, the entry written
/// atomically and readable by its user only.
pub fn publish(dir: &Path, file: &DiscoveryFile) -> io::Result<()> {
    if file.state == Some(EditorState::Stopped) {
        return remove(dir, file.pid);
    }
    make_private_folder(dir)?;
    let mut bytes = serde_json::to_vec_pretty(&Entry::of(file)).map_err(io::Error::other)?;
    bytes.push(b'\n');
    write_atomic(&dir.join(format!("{}.json", file.pid)), &bytes)
}

/// Deletes the entry of process `pid`, if there is one.
pub fn remove(dir: &Path, pid: u32) -> io::Result<()> {
    match fs::remove_file(dir.join(format!("{pid}.json"))) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn make_private_folder(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// What a look into the registry found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listed {
    /// Entries of live processes that can be trusted, by pid.
    pub entries: Vec<Entry>,
    /// What was passed over, and why.
    pub notes: Vec<String>,
}

/// The entries in `dir` of live Editors that can be trusted (the module's
/// rules). `alive` says whether a process runs (`pid_alive`, or a test's).
pub fn list(dir: &Path) -> Listed {
    list_with(dir, pid_alive)
}

/// Inside WSL, the registry of a Windows user (`/mnt/c/Users/NAME/AppData/
/// Local/UnityMcp/Editors`): Windows' ACLs on the user's profile, which WSL
/// cannot read, say who may write it, and a Windows process cannot be seen
/// from WSL (each entry is still checked against its project's discovery
/// file, and the connection decides).
pub fn list_from_wsl(dir: &Path) -> Listed {
    list_checked(dir, |_| true, false)
}

/// [`list`], with the test of a live process given.
pub fn list_with(dir: &Path, alive: impl Fn(u32) -> bool) -> Listed {
    list_checked(dir, alive, true)
}

fn list_checked(dir: &Path, alive: impl Fn(u32) -> bool, check_owner: bool) -> Listed {
    let private_to_me = |path: &Path, folder: bool| match check_owner {
        true => private_to_me(path, folder),
        false => Ok(()),
    };
    let mut listed = Listed::default();
    if let Err(why) = private_to_me(dir, true) {
        if dir.exists() {
            listed.notes.push(format!("{}: not used: {why}", dir.display()));
        }
        return listed;
    }
    let Ok(read) = fs::read_dir(dir) else { return listed };
    let mut paths: Vec<PathBuf> =
        read.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    paths.sort();
    for path in paths {
        if let Err(why) = private_to_me(&path, false) {
            listed.notes.push(format!("{}: {why}", path.display()));
            continue;
        }
        match trusted_entry(&path, &alive) {
            Ok(entry) => listed.entries.push(entry),
            Err(Some(why)) => listed.notes.push(format!("{}: {why}", path.display())),
            // A dead Editor's entry (it crashed): nothing to say.
            Err(None) => {}
        }
    }
    listed.entries.sort_by_key(|e| e.pid);
    listed
}

/// The entry at `path` (already checked to be the user's) if its process
/// lives; `None` for a dead process's.
fn trusted_entry(path: &Path, alive: &impl Fn(u32) -> bool) -> Result<Entry, Option<String>> {
    let meta = fs::metadata(path).map_err(|e| Some(e.to_string()))?;
    if meta.len() > ENTRY_LIMIT {
        return Err(Some(format!("larger than {ENTRY_LIMIT} bytes: not an entry")));
    }
    let text = fs::read_to_string(path).map_err(|e| Some(e.to_string()))?;
    let entry: Entry = serde_json::from_str(&text).map_err(|e| Some(format!("not an entry: {e}")))?;
    if path.file_stem().and_then(|s| s.to_str()) != Some(&entry.pid.to_string()) {
        return Err(Some(format!("names process {}, not the one of its file name", entry.pid)));
    }
    if !alive(entry.pid) {
        return Err(None);
    }
    Ok(entry)
}

/// Whether `path` is this user's and no one else may write it (Unix: owned
/// by the effective user, not a link, no write for group or others).
/// Windows: the folder lives in the user's own profile, whose ACL says so.
fn private_to_me(path: &Path, folder: bool) -> Result<(), String> {
    let meta = fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if meta.file_type().is_symlink() {
        return Err("a symbolic link".into());
    }
    // A FIFO or a device in the folder is never opened (reading one could block).
    match (folder, meta.is_dir(), meta.is_file()) {
        (true, true, _) | (false, _, true) => {}
        (true, false, _) => return Err("not a folder".into()),
        (false, _, false) => return Err("not a regular file".into()),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let me = nix::unistd::geteuid().as_raw();
        if meta.uid() != me {
            return Err(format!("owned by user {}, not by you ({me})", meta.uid()));
        }
        if meta.permissions().mode() & 0o022 != 0 {
            return Err(format!("others may write it (mode {:o})", meta.permissions().mode() & 0o777));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(pid: u32, project: &str, state: EditorState) -> DiscoveryFile {
        DiscoveryFile {
            port: 8701,
            pid,
            project_path: project.into(),
            unity_version: Some("6000.0.40f1".into()),
            package_version: Some("1.0.0".into()),
            protocol_version: Some(1),
            server_session_id: Some("s-1".into()),
            state: Some(state),
            updated_at: Some("2026-11-28T00:00:00.000Z".into()),
            token: Some("secret".into()),
        }
    }

    #[test]
    fn an_entry_says_where_to_look_and_holds_no_secret() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("editors");
        publish(&folder, &file(41, "/p/A", EditorState::Ready)).unwrap();
        let text = fs::read_to_string(folder.join("41.json")).unwrap();
        assert!(
            !text.contains("secret") && !text.contains("s-1") && text.contains("\"projectPath\": \"/p/A\""),
            "{text}"
        );
        let listed = list_with(&folder, |_| true);
        assert_eq!(listed.entries.len(), 1, "{listed:?}");
        assert_eq!(listed.entries[0].project_path, "/p/A");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(fs::metadata(&folder).unwrap().permissions().mode() & 0o777, 0o700);
            assert_eq!(fs::metadata(folder.join("41.json")).unwrap().permissions().mode() & 0o777, 0o600);
        }
        publish(&folder, &file(41, "/p/A", EditorState::Stopped)).unwrap();
        assert!(list_with(&folder, |_| true).entries.is_empty(), "a stopped Editor's entry is deleted");
    }

    #[test]
    fn dead_untrusted_and_mislabelled_entries_are_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("editors");
        publish(&folder, &file(41, "/p/A", EditorState::Ready)).unwrap();
        publish(&folder, &file(42, "/p/B", EditorState::Reloading)).unwrap();
        fs::copy(folder.join("41.json"), folder.join("43.json")).unwrap();
        #[cfg(unix)]
        assert!(std::process::Command::new("mkfifo").arg(folder.join("44.json")).status().unwrap().success());
        let listed = list_with(&folder, |pid| pid != 42);
        assert_eq!(listed.entries.iter().map(|e| e.pid).collect::<Vec<_>>(), vec![41]);
        assert!(listed.notes.iter().any(|n| n.contains("43.json") && n.contains("not the one of its file name")));
        #[cfg(unix)]
        assert!(listed.notes.iter().any(|n| n.contains("44.json") && n.contains("not a regular file")), "{listed:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&folder, fs::Permissions::from_mode(0o777)).unwrap();
            let shared = list_with(&folder, |_| true);
            assert!(shared.entries.is_empty(), "a folder others may write is not trusted");
            assert!(shared.notes[0].contains("others may write it"), "{shared:?}");
        }
        assert!(list_with(&dir.path().join("none"), |_| true) == Listed::default(), "no folder: nothing, quietly");
    }
}

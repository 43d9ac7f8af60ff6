//! Editors the suite starts itself, on a copy of `fixtures/unity-project`,
//! and reaches over TCP like any other:
//!
//! - `--target mono`: the Unity package's C# server, headless under mono
//!   (`unity-package/Tests~/Host`), built with `unity-package/Tests~/build`;
//!   it has a control API, so the lifecycle cases run too.
//! - `--target unity --unity PATH`: that Unity Editor in batch mode with the
//!   package, started through `UnityMcp.Editor.BatchMode.Start`; ready once
//!   its discovery file says so and it answers `ping`. A licence or compile
//!   failure is reported as such, with the log lines that show it.
//!
//! Dropping a [`Launched`] stops the Editor.

use std::{
    io::{BufRead, BufReader, Read},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use editor_link::{endpoint::Endpoint, jsonrpc::TOKEN_MEMBER, methods};

use crate::target::{Remote, RemoteKind, fixture_copy};

/// How long a headless host may take to start listening.
const HOST_START: Duration = Duration::from_secs(60);

/// An Editor the suite started; stopped on drop.
#[derive(Debug)]
pub struct Launched {
    pub remote: Remote,
    child: Child,
    /// Keeps the project copy until the Editor is gone.
    _project: tempfile::TempDir,
    /// Keeps the build the host runs from, when it is the launch's own.
    _build: Option<tempfile::TempDir>,
}

impl Launched {
    /// The Editor's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The repository's root (where `unity-package/` and `fixtures/` are).
fn repository() -> PathBuf {
    crate::home::repository()
}

/// A copy of `source` (default: the fixture project) whose manifest names
/// the package by its absolute path (the relative one would point outside
/// the copy). What Unity makes again (`Library`, `Temp`, `Logs`, `obj`) is
/// not copied: a project in use holds gigabytes there.
fn project_copy(source: Option<&Path>) -> Result<tempfile::TempDir, String> {
    let project = match source {
        None => fixture_copy()?,
        Some(source) => {
            let copy = tempfile::tempdir().map_err(|e| format!("temporary project: {e}"))?;
            copy_project(source, copy.path()).map_err(|e| format!("copying {}: {e}", source.display()))?;
            copy
        }
    };
    let manifest = project.path().join("Packages/manifest.json");
    let text = std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let mut json: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let package = repository().join("unity-package");
    let package = package.canonicalize().map_err(|e| format!("{}: {e}", package.display()))?;
    json["dependencies"]["dev.unitymcp.bridge"] = format!("file:{}", package.display()).into();
    std::fs::write(&manifest, serde_json::to_string_pretty(&json).unwrap_or_default())
        .map_err(|e| format!("{}: {e}", manifest.display()))?;
    Ok(project)
}

/// Builds the package under mono, into a folder of this run's own (two
/// runs side by side, a suite and a differential run, would otherwise
/// overwrite the host one of them is starting), and starts its headless host.
pub fn start_mono() -> Result<Launched, String> {
    let target = repository().join("target");
    std::fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let out = tempfile::Builder::new()
        .prefix("unity-package-")
        .tempdir_in(&target)
        .map_err(|e| format!("a folder for the build in {}: {e}", target.display()))?;
    let mut launched = start_mono_with(&repository().join("unity-package"), out.path(), &[])?;
    launched._build = Some(out);
    Ok(launched)
}

/// Builds `package` (a checkout's `unity-package/`) into `out` under mono
/// and starts its headless host with `extra` arguments.
pub fn start_mono_with(package: &Path, out: &Path, extra: &[std::ffi::OsString]) -> Result<Launched, String> {
    let root = repository();
    let build = package.join("Tests~/build");
    let built = Command::new(&build)
        .env("UNITY_PACKAGE_OUT", out)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", build.display()))?;
    if !built.status.success() {
        return Err(format!(
            "building the package under mono failed ({}):\n{}{}",
            built.status,
            String::from_utf8_lossy(&built.stdout),
            String::from_utf8_lossy(&built.stderr)
        ));
    }
    let project = project_copy(None)?;
    let log_path = project.path().join("Library/unity-mcp-host.log");
    std::fs::create_dir_all(project.path().join("Library")).map_err(|e| format!("temporary project: {e}"))?;
    let log = std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let mut child = Command::new("mono")
        .arg(out.join("unity-mcp-host.exe"))
        .arg("--project")
        .arg(project.path())
        .arg("--state")
        .arg(root.join("fixtures/editor-states/default.json"))
        .args(extra)
        // Should mono itself crash (its AppDomain unload has known races),
        // it says so in the host's log and exits: no debugger attached to
        // it holding its sockets open, no crash file left in the folder.
        .env("MONO_DEBUG", "no-gdb-backtrace")
        .env("MONO_CRASH_NOFILE", "1")
        // The host ends when its stdin closes: with this process.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start mono (apt-get install mono-runtime): {e}"))?;
    let stdout = child.stdout.take().ok_or("the host's stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(HOST_START).unwrap_or_default();
    let host_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let ready: Value = match serde_json::from_str(line.trim()) {
        Ok(ready) => ready,
        Err(_) => {
            let _ = child.kill();
            return Err(format!(
                "the headless host did not say where it listens within {HOST_START:?} (it printed {line:?}); its log:\n{}",
                host_log()
            ));
        }
    };
    let port = ready["port"].as_u64().and_then(|p| u16::try_from(p).ok()).ok_or("the host's port")?;
    let control = ready["control"].as_str().map(str::to_owned);
    Ok(Launched {
        remote: Remote {
            kind: RemoteKind::Mono,
            endpoint: Endpoint::Tcp(SocketAddr::from(([127, 0, 0, 1], port))),
            control,
            project: Some(project.path().to_path_buf()),
            token: None,
        },
        child,
        _project: project,
        _build: None,
    })
}

/// What shows a batch-mode Unity failing, in its log.
const LICENCE_SIGNS: &[&str] = &[
    "No valid Unity Editor license found",
    "LICENSE SYSTEM",
    "License is not active",
    "Failed to activate",
    "com.unity.editor.headless",
];
const COMPILE_SIGNS: &[&str] = &["error CS", "Scripts have compiler errors", "compilation errors"];
const CRASH_SIGNS: &[&str] = &["Received signal", "stack frames", "Crash!!!"];

/// The lines of a batch-mode Unity's log that show why it failed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FailureLines<'a> {
    pub licence: Vec<&'a str>,
    pub compile: Vec<&'a str>,
    pub crash: Vec<&'a str>,
}

/// The lines of `log` that show a licence, compile or crash failure, at
/// most 20 of each.
pub fn failure_lines(log: &str) -> FailureLines<'_> {
    let pick = |signs: &[&str]| -> Vec<&str> {
        log.lines().filter(|l| signs.iter().any(|s| l.contains(s))).take(20).collect()
    };
    // A crash's stack: its lines start `#N `.
    let frame = |l: &str| l.strip_prefix('#').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    let crash = log.lines().filter(|l| CRASH_SIGNS.iter().any(|s| l.contains(s)) || frame(l)).take(20).collect();
    FailureLines { licence: pick(LICENCE_SIGNS), compile: pick(COMPILE_SIGNS), crash }
}

/// What a batch-mode Unity's failure to start was, in words, with the log
/// lines that show it (or the end of the log when none do).
fn explain_failure(what: String, log: &str, log_path: &Path) -> String {
    let lines = failure_lines(log);
    let mut message = what;
    if !lines.licence.is_empty() {
        message.push_str("\nUnity's licence is not usable (activate it, or set the UNITY_LICENSE secret in CI):\n  ");
        message.push_str(&lines.licence.join("\n  "));
    }
    if !lines.compile.is_empty() {
        message.push_str("\nthe project or the package does not compile:\n  ");
        message.push_str(&lines.compile.join("\n  "));
    }
    if !lines.crash.is_empty() {
        message.push_str("\nUnity crashed as it started:\n  ");
        message.push_str(&lines.crash.join("\n  "));
    }
    if lines == FailureLines::default() {
        let tail: Vec<&str> = log.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
        message.push_str(&format!("\nthe end of its log ({}):\n  {}", log_path.display(), tail.join("\n  ")));
    }
    message
}

/// Starts `unity` in batch mode on a copy of `project` (default: the
/// fixture project) with the package, and waits (up to `timeout`, imports
/// take minutes the first time) until it is ready: discovery file `ready`,
/// connect, `ping`.
pub fn start_unity(unity: &Path, timeout: Duration, project: Option<&Path>) -> Result<Launched, String> {
    let project = project_copy(project)?;
    let log_path = project.path().join("unity-editor.log");
    let mut child = Command::new(unity)
        .args(["-batchmode", "-nographics", "-silent-crashes", "-projectPath"])
        .arg(project.path())
        .args(["-executeMethod", "UnityMcp.Editor.BatchMode.Start", "-logFile"])
        .arg(&log_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start Unity at {}: {e}", unity.display()))?;
    let started = Instant::now();
    let read_log = || {
        let mut text = String::new();
        if let Ok(mut file) = std::fs::File::open(&log_path) {
            let _ = file.read_to_string(&mut text);
        }
        text
    };
    let explain = |what: String, log: &str| explain_failure(what, log, &log_path);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(explain(format!("Unity exited ({status}) before it was ready"), &read_log()));
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            return Err(explain(format!("Unity was not ready within {timeout:?}"), &read_log()));
        }
        if let Ok(file) = editor_link::discovery::DiscoveryFile::read(project.path()) {
            if file.state == Some(editor_link::discovery::EditorState::Ready)
                && answers_ping(file.port, file.token.as_deref())
            {
                return Ok(Launched {
                    remote: Remote {
                        kind: RemoteKind::Unity,
                        endpoint: Endpoint::Tcp(SocketAddr::from(([127, 0, 0, 1], file.port))),
                        control: None,
                        project: Some(project.path().to_path_buf()),
                        token: None,
                    },
                    child,
                    _project: project,
                    _build: None,
                });
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Copies a Unity project from `from` to `to`, without what Unity makes
/// again from it.
fn copy_project(from: &Path, to: &Path) -> std::io::Result<()> {
    const REMADE: [&str; 4] = ["Library", "Temp", "Logs", "obj"];
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if REMADE.iter().any(|r| name == *r) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            fake_unity::copy_dir(&path, &to.join(&name))?;
        } else {
            std::fs::copy(&path, to.join(&name))?;
        }
    }
    Ok(())
}

/// Does an Editor listen on `port` and answer `ping` (newline framing)?
fn answers_ping(port: u16, token: Option<&str>) -> bool {
    use std::io::Write;
    let Ok(mut stream) =
        std::net::TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_secs(2))
    else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let ping = json!({"jsonrpc": "2.0", "id": "ready", "method": methods::PING, "params": {}, TOKEN_MEMBER: token});
    if stream.write_all(format!("{ping}\n").as_bytes()).is_err() {
        return false;
    }
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    for _ in 0..8 {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return false;
        }
        if let Ok(message) = serde_json::from_str::<Value>(line.trim()) {
            if message["id"] == "ready" {
                return message.get("result").is_some();
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn licence_and_compile_failures_are_told_apart() {
        let log = "Loading\n[LICENSE SYSTEM] No valid Unity Editor license found\nAssets/A.cs(3,1): error CS1029: #error: 'x'\nBye";
        let lines = failure_lines(log);
        assert_eq!(lines.licence, ["[LICENSE SYSTEM] No valid Unity Editor license found"]);
        assert_eq!(lines.compile, ["Assets/A.cs(3,1): error CS1029: #error: 'x'"]);
        assert!(lines.crash.is_empty());
        let crash = failure_lines("Loading\nReceived signal SIGSEGV\nObtained 2 stack frames.\n#0  0x0 in main\nBye");
        assert_eq!(crash.crash, ["Received signal SIGSEGV", "Obtained 2 stack frames.", "#0  0x0 in main"]);
        assert_eq!(failure_lines("all fine"), FailureLines::default());
    }
}

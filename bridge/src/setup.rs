//! `unity-mcp-bridge setup CLIENT`: adds the bridge to an MCP client's
//! configuration, in that client's own format and place, keeping every other
//! server (and everything else) in the file as it was. A file that cannot be
//! read is reported, never overwritten.

use std::{
    fmt, fs, io,
    path::{Path, PathBuf},
    str::FromStr,
};

use serde_json::{Map, Value, json};

use editor_link::discovery::write_durable;

/// The MCP clients `setup` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    ClaudeCode,
    Cursor,
    Vscode,
    Windsurf,
    Codex,
    Gemini,
}

impl Client {
    pub const ALL: [Client; 6] =
        [Client::ClaudeCode, Client::Cursor, Client::Vscode, Client::Windsurf, Client::Codex, Client::Gemini];

    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Vscode => "vscode",
            Client::Windsurf => "windsurf",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
        }
    }

    /// The scope used when none is asked for.
    pub fn default_scope(self) -> Scope {
        match self {
            Client::Windsurf | Client::Codex => Scope::User,
            _ => Scope::Project,
        }
    }

    /// The configuration file for `scope`, or why the client has none there.
    pub fn config_path(self, scope: Scope, project: &Path, home: &Path) -> Result<PathBuf, String> {
        let unsupported = || format!("{} has no {scope}-scoped MCP configuration", self.name());
        let (base, relative) = match (self, scope) {
            (Client::ClaudeCode, Scope::Project) => (project, ".mcp.json"),
            (Client::ClaudeCode, Scope::User) => (home, ".claude.json"),
            (Client::Cursor, Scope::Project) => (project, ".cursor/mcp.json"),
            (Client::Cursor, Scope::User) => (home, ".cursor/mcp.json"),
            (Client::Vscode, Scope::Project) => (project, ".vscode/mcp.json"),
            (Client::Vscode, Scope::User) => return Err(unsupported()),
            (Client::Windsurf, Scope::User) => (home, ".codeium/windsurf/mcp_config.json"),
            (Client::Windsurf, Scope::Project) => return Err(unsupported()),
            (Client::Codex, Scope::User) => (home, ".codex/config.toml"),
            (Client::Codex, Scope::Project) => (project, ".codex/config.toml"),
            (Client::Gemini, Scope::Project) => (project, ".gemini/settings.json"),
            (Client::Gemini, Scope::User) => (home, ".gemini/settings.json"),
        };
        // Joined a component at a time: one separator style on Windows.
        Ok(relative.split('/').fold(base.to_owned(), |path, part| path.join(part)))
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Client {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.to_ascii_lowercase().replace(['_', ' '], "-");
        let wanted = match wanted.as_str() {
            "claude" | "claudecode" => "claude-code",
            "code" | "vs-code" => "vscode",
            "gemini-cli" => "gemini",
            other => other,
        }
        .to_owned();
        Client::ALL.into_iter().find(|c| c.name() == wanted).ok_or_else(|| {
            let names: Vec<&str> = Client::ALL.iter().map(|c| c.name()).collect();
            format!("unknown client {s:?}; known clients: {}", names.join(", "))
        })
    }
}

/// Whose configuration: the project's (shared through the repository) or the
/// user's (every project).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Project => "project",
            Scope::User => "user",
        })
    }
}

impl FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "project" => Ok(Scope::Project),
            "user" | "global" => Ok(Scope::User),
            other => Err(format!("unknown scope {other:?} (project or user)")),
        }
    }
}

/// How the client starts the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// This binary, by its absolute path.
    Binary,
    /// `npx -y unity-mcp-bridge@VERSION` (the npm package).
    Npx,
    /// `uvx unity-mcp-bridge@VERSION` (the PyPI package).
    Uvx,
}

impl Via {
    pub fn name(self) -> &'static str {
        match self {
            Via::Binary => "binary",
            Via::Npx => "npx",
            Via::Uvx => "uvx",
        }
    }

    /// How this process was started, as far as it can tell: the npm
    /// package's launcher says so in the environment (`launcher`); uv says
    /// it started a process by setting `UV` (`run_by_uv`), and `uvx` runs a
    /// tool from its cache (`…/archive-v0/…/bin/`, wherever the cache is),
    /// not from a project's environment; anything else is a binary that
    /// stays where it is (cargo install, a release download, pip install).
    pub fn of_this_process(launcher: Option<&str>, run_by_uv: bool, exe: &Path) -> Via {
        if launcher == Some("npm") {
            return Via::Npx;
        }
        let path = exe.to_string_lossy().to_ascii_lowercase().replace('\\', "/");
        let in_uv_cache = path.split('/').any(|part| {
            part.strip_prefix("archive-v").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
        if run_by_uv && in_uv_cache { Via::Uvx } else { Via::Binary }
    }
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Via {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "binary" | "path" => Ok(Via::Binary),
            "npx" | "npm" => Ok(Via::Npx),
            "uvx" | "uv" => Ok(Via::Uvx),
            other => Err(format!("unknown way to start the bridge {other:?} (binary, npx or uvx)")),
        }
    }
}

/// Where the configuration will be used: the command line a client can
/// start differs on Windows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub via: Via,
    /// This binary's absolute path (for [`Via::Binary`]).
    pub binary: String,
    /// The version `npx`/`uvx` are pinned to: this binary's, so the
    /// configuration starts the bridge the user set up.
    pub version: String,
    /// The Windows environment the client may not pass on (for Codex):
    /// `SYSTEMROOT` (Winsock and DNS need it), `APPDATA` (npm's cache),
    /// `LOCALAPPDATA` (uv's cache), with their values where setup runs.
    /// `None` off Windows.
    pub windows_env: Option<Vec<(String, String)>>,
}

impl Launch {
    /// The variables [`Launch::windows_env`] carries.
    pub const WINDOWS_ENV: [&'static str; 3] = ["SYSTEMROOT", "APPDATA", "LOCALAPPDATA"];

    /// The command and its leading arguments.
    fn command(&self) -> (String, Vec<String>) {
        let pinned = format!("unity-mcp-bridge@{}", self.version);
        match (self.via, self.windows_env.is_some()) {
            (Via::Binary, _) => (self.binary.clone(), vec![]),
            // npx is a batch file on Windows: programs started without a
            // shell (every MCP client) cannot run it directly.
            (Via::Npx, true) => ("cmd".into(), vec!["/c".into(), "npx".into(), "-y".into(), pinned]),
            (Via::Npx, false) => ("npx".into(), vec!["-y".into(), pinned]),
            (Via::Uvx, _) => ("uvx".into(), vec![pinned]),
        }
    }

    /// The entry `client` needs to start the bridge for `project`.
    pub fn entry(&self, client: Client, name: &str, project: &Path) -> ServerEntry {
        let (command, mut args) = self.command();
        args.extend(["--project".to_owned(), project.to_string_lossy().into_owned()]);
        let codex = client == Client::Codex;
        ServerEntry {
            name: name.to_owned(),
            command,
            args,
            // Codex starts servers with a cleared environment.
            env: if codex { self.windows_env.clone().unwrap_or_default() } else { vec![] },
            // Codex gives a server 10 s to start and list its tools: a first
            // `npx`/`uvx` run downloads the package, and `tools/list` waits
            // for an Editor that is still starting (`--tools-wait`, 10 s).
            // Its 60 s tool limit would cut off compiles and test runs the
            // bridge itself gives up to their own deadlines.
            codex_timeouts: codex.then_some(CodexTimeouts {
                startup_sec: if self.via == Via::Binary { 30 } else { 120 },
                tool_sec: 900,
            }),
        }
    }
}

/// Codex's per-server time limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodexTimeouts {
    pub startup_sec: u32,
    pub tool_sec: u32,
}

/// The server entry to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerEntry {
    /// The key under the client's servers: `unity`.
    pub name: String,
    /// The program: the bridge's absolute path, `npx`, `cmd` or `uvx`.
    pub command: String,
    pub args: Vec<String>,
    /// Environment variables to set (added to any the user has).
    pub env: Vec<(String, String)>,
    pub codex_timeouts: Option<CodexTimeouts>,
}

/// What `setup` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Added(PathBuf),
    Updated(PathBuf),
    Unchanged(PathBuf),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Added(p) => write!(f, "added to {}", p.display()),
            Outcome::Updated(p) => write!(f, "updated in {}", p.display()),
            Outcome::Unchanged(p) => write!(f, "already set in {}", p.display()),
        }
    }
}

/// Why `setup` could not write.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Unsupported(String),
    #[error(
        "{path} exists but is not valid {format} ({why}); it was left as it is — fix or move it, then run setup again"
    )]
    Unreadable { path: PathBuf, format: &'static str, why: String },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// Writes `entry` into `client`'s configuration for `scope`.
pub fn setup(
    client: Client,
    scope: Scope,
    project: &Path,
    home: &Path,
    entry: &ServerEntry,
) -> Result<Outcome, SetupError> {
    let path = client.config_path(scope, project, home).map_err(SetupError::Unsupported)?;
    let existing = match fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(source) => return Err(SetupError::Io { path, source }),
    };
    let updated = match client {
        Client::Codex => merge_toml(existing.as_deref(), entry).map_err(|why| SetupError::Unreadable {
            path: path.clone(),
            format: "TOML",
            why,
        })?,
        _ => merge_json(client, existing.as_deref(), entry).map_err(|why| SetupError::Unreadable {
            path: path.clone(),
            format: "JSON",
            why,
        })?,
    };
    if existing.as_deref() == Some(updated.as_str()) {
        return Ok(Outcome::Unchanged(path));
    }
    write_durable(&path, updated.as_bytes()).map_err(|source| SetupError::Io { path: path.clone(), source })?;
    Ok(if existing.is_some() { Outcome::Updated(path) } else { Outcome::Added(path) })
}

/// The entry in a JSON client's shape.
fn json_entry(client: Client, entry: &ServerEntry) -> Value {
    match client {
        Client::ClaudeCode | Client::Vscode => json!({"type": "stdio", "command": entry.command, "args": entry.args}),
        _ => json!({"command": entry.command, "args": entry.args}),
    }
}

/// Sets `entry.env`'s variables in `current["env"]`, keeping the user's others.
fn merge_json_env(current: &mut Map<String, Value>, entry: &ServerEntry) -> Result<(), String> {
    if entry.env.is_empty() {
        return Ok(());
    }
    let env = current.entry("env").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(env) = env else { return Err(format!("\"{}\".env is not an object", entry.name)) };
    for (k, v) in &entry.env {
        env.insert(k.clone(), Value::String(v.clone()));
    }
    Ok(())
}

fn merge_json(client: Client, existing: Option<&str>, entry: &ServerEntry) -> Result<String, String> {
    let mut root = match existing {
        None => Value::Object(Map::new()),
        Some(text) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(text) => serde_json::from_str::<Value>(text).map_err(|e| e.to_string())?,
    };
    let Value::Object(root_map) = &mut root else { return Err("the top level is not an object".into()) };
    let key = if client == Client::Vscode { "servers" } else { "mcpServers" };
    let servers = root_map.entry(key.to_owned()).or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else { return Err(format!("\"{key}\" is not an object")) };
    let new = json_entry(client, entry);
    let current = match servers.get_mut(&entry.name) {
        // Keep what the user added to our entry (env, cwd …); set ours.
        Some(Value::Object(current)) => {
            for (k, v) in new.as_object().into_iter().flatten() {
                current.insert(k.clone(), v.clone());
            }
            current
        }
        _ => {
            servers.insert(entry.name.clone(), new);
            let Some(Value::Object(current)) = servers.get_mut(&entry.name) else { unreachable!("just inserted") };
            current
        }
    };
    merge_json_env(current, entry)?;
    let mut text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

fn merge_toml(existing: Option<&str>, entry: &ServerEntry) -> Result<String, String> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    let mut doc = existing.unwrap_or("").parse::<DocumentMut>().map_err(|e| e.to_string())?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let Some(servers) = servers.as_table_mut() else { return Err("mcp_servers is not a table".into()) };
    let server = servers.entry(&entry.name).or_insert_with(|| Item::Table(Table::new()));
    let Some(server) = server.as_table_mut() else { return Err(format!("mcp_servers.{} is not a table", entry.name)) };
    server["command"] = value(entry.command.as_str());
    let mut args = Array::new();
    for arg in &entry.args {
        args.push(arg.as_str());
    }
    server["args"] = value(args);
    if !entry.env.is_empty() {
        let env = server.entry("env").or_insert_with(|| Item::Table(Table::new()));
        let Some(env) = env.as_table_like_mut() else {
            return Err(format!("mcp_servers.{}.env is not a table", entry.name));
        };
        for (k, v) in &entry.env {
            env.insert(k, value(v.as_str()));
        }
    }
    if let Some(timeouts) = entry.codex_timeouts {
        server["startup_timeout_sec"] = value(i64::from(timeouts.startup_sec));
        server["tool_timeout_sec"] = value(i64::from(timeouts.tool_sec));
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ServerEntry {
        ServerEntry {
            name: "unity".into(),
            command: "/opt/bin/unity-mcp-bridge".into(),
            args: vec!["--project".into(), "/work/game".into()],
            env: vec![],
            codex_timeouts: None,
        }
    }

    fn launch(via: Via, windows: bool) -> Launch {
        Launch {
            via,
            binary: if windows { r"C:\Tools\unity-mcp-bridge.exe" } else { "/opt/bin/unity-mcp-bridge" }.into(),
            version: "1.2.3".into(),
            windows_env: windows.then(|| {
                vec![
                    ("SYSTEMROOT".into(), r"C:\Windows".into()),
                    ("APPDATA".into(), r"C:\Users\u\AppData\Roaming".into()),
                    ("LOCALAPPDATA".into(), r"C:\Users\u\AppData\Local".into()),
                ]
            }),
        }
    }

    #[test]
    fn each_way_of_starting_the_bridge_has_its_command_line() {
        let project = Path::new("/work/game");
        let line = |via, windows, client| {
            let e = launch(via, windows).entry(client, "unity", project);
            std::iter::once(e.command).chain(e.args).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(line(Via::Binary, false, Client::Cursor), "/opt/bin/unity-mcp-bridge --project /work/game");
        assert_eq!(line(Via::Npx, false, Client::Cursor), "npx -y unity-mcp-bridge@1.2.3 --project /work/game");
        assert_eq!(line(Via::Uvx, false, Client::Cursor), "uvx unity-mcp-bridge@1.2.3 --project /work/game");
        assert_eq!(
            line(Via::Npx, true, Client::ClaudeCode),
            "cmd /c npx -y unity-mcp-bridge@1.2.3 --project /work/game"
        );
        assert_eq!(line(Via::Uvx, true, Client::Vscode), "uvx unity-mcp-bridge@1.2.3 --project /work/game");
        assert_eq!(line(Via::Binary, true, Client::Gemini), r"C:\Tools\unity-mcp-bridge.exe --project /work/game");
    }

    #[test]
    fn codex_gets_time_limits_everywhere_and_the_windows_environment_on_windows() {
        let project = Path::new("/work/game");
        let unix = launch(Via::Npx, false).entry(Client::Codex, "unity", project);
        assert_eq!(unix.env, vec![]);
        assert_eq!(unix.codex_timeouts, Some(CodexTimeouts { startup_sec: 120, tool_sec: 900 }));
        let windows = launch(Via::Binary, true).entry(Client::Codex, "unity", project);
        assert_eq!(windows.codex_timeouts, Some(CodexTimeouts { startup_sec: 30, tool_sec: 900 }));
        let doc: toml_edit::DocumentMut =
            merge_toml(Some("[mcp_servers.unity]\ncommand = \"old\"\nenv = { MY_VAR = \"kept\" }\n"), &windows)
                .unwrap()
                .parse()
                .unwrap();
        let server = &doc["mcp_servers"]["unity"];
        assert_eq!(server["startup_timeout_sec"].as_integer(), Some(30));
        assert_eq!(server["tool_timeout_sec"].as_integer(), Some(900));
        assert_eq!(server["env"]["SYSTEMROOT"].as_str(), Some(r"C:\Windows"));
        assert_eq!(server["env"]["LOCALAPPDATA"].as_str(), Some(r"C:\Users\u\AppData\Local"));
        assert_eq!(server["env"]["MY_VAR"].as_str(), Some("kept"));
        // The other clients pass their environment on: nothing is added.
        let cursor = launch(Via::Npx, true).entry(Client::Cursor, "unity", project);
        assert!(cursor.env.is_empty() && cursor.codex_timeouts.is_none());
        let json: Value = serde_json::from_str(
            &merge_json(Client::Cursor, Some(r#"{"mcpServers":{"unity":{"env":{"MY_VAR":"kept"}}}}"#), &cursor)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(json["mcpServers"]["unity"]["env"], json!({"MY_VAR": "kept"}));
        assert_eq!(json["mcpServers"]["unity"]["command"], "cmd");
    }

    #[test]
    fn json_env_is_merged_into_the_users() {
        let mut with_env = entry();
        with_env.env = vec![("SYSTEMROOT".into(), r"C:\Windows".into())];
        let merged: Value = serde_json::from_str(
            &merge_json(Client::Cursor, Some(r#"{"mcpServers":{"unity":{"env":{"A":"1"}}}}"#), &with_env).unwrap(),
        )
        .unwrap();
        assert_eq!(merged["mcpServers"]["unity"]["env"], json!({"A": "1", "SYSTEMROOT": r"C:\Windows"}));
        assert!(merge_json(Client::Cursor, Some(r#"{"mcpServers":{"unity":{"env":3}}}"#), &with_env).is_err());
    }

    #[test]
    fn how_this_process_was_started() {
        let npm_exe = Path::new("/home/u/.npm/_npx/ab12/node_modules/@unity-mcp-bridge/linux-x64/bin/unity-mcp-bridge");
        assert_eq!(Via::of_this_process(Some("npm"), false, npm_exe), Via::Npx);
        let uv = Path::new("/home/u/.cache/uv/archive-v0/Xy12/bin/unity-mcp-bridge");
        assert_eq!(Via::of_this_process(None, true, uv), Via::Uvx);
        let uv_windows = Path::new(r"C:\Users\u\AppData\Local\uv\cache\archive-v0\Xy\Scripts\unity-mcp-bridge.exe");
        assert_eq!(Via::of_this_process(None, true, uv_windows), Via::Uvx);
        // `uv run` in a project: its environment is a stable place.
        let venv = Path::new("/work/game/.venv/bin/unity-mcp-bridge");
        assert_eq!(Via::of_this_process(None, true, venv), Via::Binary);
        // The same cache path, not started by uv (copied out by hand): a binary.
        assert_eq!(Via::of_this_process(None, false, uv), Via::Binary);
        assert_eq!(Via::of_this_process(None, false, Path::new("/home/u/.cargo/bin/unity-mcp-bridge")), Via::Binary);
        assert_eq!("npx".parse::<Via>(), Ok(Via::Npx));
        assert!("brew".parse::<Via>().unwrap_err().contains("binary, npx or uvx"));
    }

    #[test]
    fn json_clients_merge_and_keep_the_rest() {
        let existing = r#"{"theme":"dark","mcpServers":{"github":{"command":"gh-mcp"},"unity":{"command":"old","env":{"X":"1"}}}}"#;
        let merged: Value =
            serde_json::from_str(&merge_json(Client::Cursor, Some(existing), &entry()).unwrap()).unwrap();
        assert_eq!(merged["theme"], "dark");
        assert_eq!(merged["mcpServers"]["github"], json!({"command": "gh-mcp"}));
        assert_eq!(
            merged["mcpServers"]["unity"],
            json!({"command": "/opt/bin/unity-mcp-bridge", "env": {"X": "1"}, "args": ["--project", "/work/game"]})
        );
        let vscode: Value = serde_json::from_str(&merge_json(Client::Vscode, None, &entry()).unwrap()).unwrap();
        assert_eq!(vscode["servers"]["unity"]["type"], "stdio");
        assert!(merge_json(Client::Gemini, Some("{not json"), &entry()).is_err());
        assert!(merge_json(Client::Gemini, Some(r#"{"mcpServers": []}"#), &entry()).is_err());
    }

    #[test]
    fn codex_toml_merges_and_keeps_comments() {
        let existing = "# my settings\nmodel = \"o4\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\" # keep me\n";
        let merged = merge_toml(Some(existing), &entry()).unwrap();
        assert!(merged.starts_with("# my settings\nmodel = \"o4\"\n"), "{merged}");
        assert!(merged.contains("command = \"gh-mcp\" # keep me"), "{merged}");
        let doc: toml_edit::DocumentMut = merged.parse().unwrap();
        assert_eq!(doc["mcp_servers"]["unity"]["command"].as_str(), Some("/opt/bin/unity-mcp-bridge"));
        assert_eq!(doc["mcp_servers"]["unity"]["args"].as_array().unwrap().len(), 2);
        assert!(merge_toml(Some("mcp_servers = 3"), &entry()).is_err());
    }

    #[test]
    fn setup_writes_reports_and_never_clobbers() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let first = setup(Client::ClaudeCode, Scope::Project, project.path(), home.path(), &entry()).unwrap();
        assert_eq!(first, Outcome::Added(project.path().join(".mcp.json")));
        let again = setup(Client::ClaudeCode, Scope::Project, project.path(), home.path(), &entry()).unwrap();
        assert!(matches!(again, Outcome::Unchanged(_)));
        let gemini = project.path().join(".gemini/settings.json");
        fs::create_dir_all(gemini.parent().unwrap()).unwrap();
        fs::write(&gemini, "{ broken").unwrap();
        let err = setup(Client::Gemini, Scope::Project, project.path(), home.path(), &entry()).unwrap_err();
        assert!(err.to_string().contains("left as it is"), "{err}");
        assert_eq!(fs::read_to_string(&gemini).unwrap(), "{ broken");
        assert!(matches!(
            setup(Client::Windsurf, Scope::Project, project.path(), home.path(), &entry()),
            Err(SetupError::Unsupported(_))
        ));
        let codex = setup(Client::Codex, Scope::User, project.path(), home.path(), &entry()).unwrap();
        assert_eq!(codex, Outcome::Added(home.path().join(".codex/config.toml")));
    }

    #[test]
    fn client_names() {
        assert_eq!("claude-code".parse::<Client>(), Ok(Client::ClaudeCode));
        assert_eq!("VS Code".parse::<Client>(), Ok(Client::Vscode));
        assert!("emacs".parse::<Client>().unwrap_err().contains("known clients"));
    }
}

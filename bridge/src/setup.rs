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

use editor_link::discovery::write_atomic;

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
        Ok(match (self, scope) {
            (Client::ClaudeCode, Scope::Project) => project.join(".mcp.json"),
            (Client::ClaudeCode, Scope::User) => home.join(".claude.json"),
            (Client::Cursor, Scope::Project) => project.join(".cursor/mcp.json"),
            (Client::Cursor, Scope::User) => home.join(".cursor/mcp.json"),
            (Client::Vscode, Scope::Project) => project.join(".vscode/mcp.json"),
            (Client::Vscode, Scope::User) => return Err(unsupported()),
            (Client::Windsurf, Scope::User) => home.join(".codeium/windsurf/mcp_config.json"),
            (Client::Windsurf, Scope::Project) => return Err(unsupported()),
            (Client::Codex, Scope::User) => home.join(".codex/config.toml"),
            (Client::Codex, Scope::Project) => project.join(".codex/config.toml"),
            (Client::Gemini, Scope::Project) => project.join(".gemini/settings.json"),
            (Client::Gemini, Scope::User) => home.join(".gemini/settings.json"),
        })
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

/// The server entry to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerEntry {
    /// The key under the client's servers: `unity`.
    pub name: String,
    /// The bridge's absolute path.
    pub command: String,
    pub args: Vec<String>,
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
    write_atomic(&path, updated.as_bytes()).map_err(|source| SetupError::Io { path: path.clone(), source })?;
    Ok(if existing.is_some() { Outcome::Updated(path) } else { Outcome::Added(path) })
}

/// The entry in a JSON client's shape.
fn json_entry(client: Client, entry: &ServerEntry) -> Value {
    match client {
        Client::ClaudeCode | Client::Vscode => json!({"type": "stdio", "command": entry.command, "args": entry.args}),
        _ => json!({"command": entry.command, "args": entry.args}),
    }
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
    match servers.get_mut(&entry.name) {
        // Keep what the user added to our entry (env, cwd …); set ours.
        Some(Value::Object(current)) => {
            for (k, v) in new.as_object().into_iter().flatten() {
                current.insert(k.clone(), v.clone());
            }
        }
        _ => {
            servers.insert(entry.name.clone(), new);
        }
    }
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
        }
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

//! The simulated editor state: what the fake Editor knows about its project
//! (scene, console, tests, compile diagnostics, menu items, assets, search
//! providers, windows, settings), loaded from a fixture file.
//!
//! A state file may `extend` another one (a path relative to itself): objects
//! are merged key by key, other values replaced, and a key written `name+`
//! appends to the array `name` instead of replacing it. So a variant such as
//! "the project with compile errors" states only what differs.

use std::{
    fs,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The current state file format.
pub const FORMAT_VERSION: u32 = 1;

/// A whole state file, after `extends` has been resolved.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditorStateFile {
    pub format_version: u32,
    /// What the file describes, for people.
    #[serde(default)]
    pub description: String,
    pub editor: EditorInfo,
    pub settings: Settings,
    pub scene: Scene,
    #[serde(default)]
    pub console: Vec<LogEntry>,
    /// What the project's scripts log each time they load (an
    /// `[InitializeOnLoad]` banner): the Console gets it at start, after the
    /// compile's messages, and again after every domain reload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_logs: Vec<LogEntry>,
    pub compile: CompileState,
    #[serde(default)]
    pub tests: Vec<TestCase>,
    #[serde(default)]
    pub menu_items: Vec<MenuItem>,
    #[serde(default)]
    pub assets: Vec<Asset>,
    #[serde(default)]
    pub search_providers: Vec<SearchProvider>,
    #[serde(default)]
    pub windows: Vec<EditorWindow>,
}

/// Facts about the Editor and how it behaves in time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditorInfo {
    pub unity_version: String,
    /// `Application.platform` in the Editor: `LinuxEditor`, `OSXEditor` …
    pub platform: String,
    pub product_name: String,
    /// `PlayerSettings.companyName` (uLoopMCP 2.1.1's `get-version` says it).
    #[serde(default = "default_company")]
    pub company_name: String,
    /// `Application.persistentDataPath`; `None`: Linux's `~/.config/unity3d/COMPANY/PRODUCT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_data_path: Option<String>,
    /// `Application.temporaryCachePath`; `None`: `/tmp/COMPANY/PRODUCT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temporary_cache_path: Option<String>,
    /// The Unity package version the fake claims (`Ver` in every result).
    pub package_version: String,
    /// How long a domain reload keeps the Editor away, in milliseconds.
    pub reload_downtime_ms: u64,
    /// Time between listening again after a reload and tools being registered
    /// (`notifications/tools/list_changed`), in milliseconds.
    pub tools_ready_delay_ms: u64,
}

fn default_company() -> String {
    "DefaultCompany".into()
}

/// Security settings (the seeds' McpSecurityChecker) and disabled tools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    /// "Enable Tests Execution": gates `run-tests`.
    pub enable_tests_execution: bool,
    /// "Allow Menu Item Execution": gates `execute-menu-item`.
    pub allow_menu_item_execution: bool,
    /// Gates `execute-dynamic-code`.
    pub dynamic_code_security_level: SecurityLevel,
    /// Third-party tools (from other assemblies) are blocked unless allowed.
    pub allow_third_party_tools: bool,
    /// Public tools switched off in settings.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// Requests without the token are run (for legacy clients that cannot
    /// send one); off by default (protocol §7).
    #[serde(default)]
    pub allow_clients_without_token: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SecurityLevel {
    Disabled,
    Restricted,
    FullAccess,
}

impl SecurityLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityLevel::Disabled => "Disabled",
            SecurityLevel::Restricted => "Restricted",
            SecurityLevel::FullAccess => "FullAccess",
        }
    }
}

/// The open scene.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scene {
    pub name: String,
    pub path: String,
    pub roots: Vec<GameObject>,
}

impl EditorInfo {
    /// Whether this Unity names objects by a 64-bit EntityId (6000.5 and
    /// newer; 6000.4's EntityId still holds an int).
    pub fn entity_ids_are_64_bit(&self) -> bool {
        let mut parts = self.unity_version.split('.');
        let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        major > 6000 || major == 6000 && minor >= 5
    }
}

impl GameObject {
    /// How the Unity `editor` plays names this object, as the package says
    /// it (docs/editor-link-protocol.md §6): `id`, the instance ID (from
    /// 6000.5 the EntityId's low 32 bits), and `entityId`, exact, in
    /// decimal. From 6000.5 the EntityId is made as 6000.5 makes one: a
    /// version tag in the high 32 bits and the index below, so it is past 2^53.
    pub fn identity(&self, editor: &EditorInfo) -> (i64, String) {
        if editor.entity_ids_are_64_bit() {
            let entity = (0x7E2_5105_u64 << 32) | u64::from(self.instance_id as u32);
            (i64::from(self.instance_id as i32), entity.to_string())
        } else {
            (self.instance_id, self.instance_id.to_string())
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GameObject {
    pub name: String,
    /// `GetInstanceID()`: unique within the session.
    pub instance_id: i64,
    #[serde(default = "untagged")]
    pub tag: String,
    #[serde(default)]
    pub layer: u32,
    /// `activeSelf`.
    #[serde(default = "yes")]
    pub active: bool,
    #[serde(default)]
    pub components: Vec<Component>,
    #[serde(default)]
    pub children: Vec<GameObject>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Component {
    /// Short type name: `Transform`, `PlayerController`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Namespace, empty for the global namespace.
    #[serde(default)]
    pub namespace: String,
    pub assembly: String,
    /// The component's own serialized properties.
    #[serde(default)]
    pub properties: Map<String, Value>,
    /// Inherited properties that differ from what the fake derives (`name`,
    /// `tag`, `hideFlags`, and `enabled` for behaviours): a disabled
    /// component says `{"enabled": false}` here.
    #[serde(default)]
    pub inherited_properties: Map<String, Value>,
}

impl Component {
    /// Whether the component has an `enabled` switch (Behaviour, Renderer,
    /// Collider), which `Transform`, `MeshFilter` and `Rigidbody` lack.
    pub fn has_enabled(&self) -> bool {
        !matches!(self.type_name.as_str(), "Transform" | "MeshFilter" | "Rigidbody")
    }

    /// `Type.AssemblyQualifiedName` as .NET writes it.
    pub fn assembly_qualified_name(&self) -> String {
        let full = if self.namespace.is_empty() {
            self.type_name.clone()
        } else {
            format!("{}.{}", self.namespace, self.type_name)
        };
        format!("{full}, {}, Version=0.0.0.0, Culture=neutral, PublicKeyToken=null", self.assembly)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LogType {
    Log,
    Warning,
    Error,
}

impl LogType {
    pub fn as_str(self) -> &'static str {
        match self {
            LogType::Log => "Log",
            LogType::Warning => "Warning",
            LogType::Error => "Error",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogEntry {
    #[serde(rename = "type")]
    pub log_type: LogType,
    pub message: String,
    #[serde(default)]
    pub stack_trace: String,
}

/// What a compile of the project reports.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompileState {
    /// How long a compile takes, in milliseconds.
    pub duration_ms: u64,
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A compiler message, as Unity's `CompilerMessage` has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Project-relative path.
    pub file: String,
    pub line: u32,
    #[serde(default = "one")]
    pub column: u32,
    /// The compiler's code, `CS0103`.
    pub code: String,
    pub text: String,
}

impl Diagnostic {
    /// The message as Unity prints it:
    /// `Assets/X.cs(12,5): error CS0103: The name 'y' does not exist …`.
    pub fn unity_message(&self) -> String {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        format!("{}({},{}): {severity} {}: {}", self.file, self.line, self.column, self.code, self.text)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TestMode {
    EditMode,
    PlayMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TestOutcome {
    Passed,
    Failed,
    Skipped,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestCase {
    /// `Namespace.Class.Method`.
    pub full_name: String,
    pub assembly: String,
    pub mode: TestMode,
    pub outcome: TestOutcome,
    #[serde(default)]
    pub duration_ms: u64,
    /// Failure or skip message.
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub stack_trace: String,
}

impl TestCase {
    /// (class full name, method name).
    pub fn split_name(&self) -> (&str, &str) {
        self.full_name.rsplit_once('.').unwrap_or(("", &self.full_name))
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MenuItem {
    pub path: String,
    pub method_name: String,
    pub type_name: String,
    pub assembly_name: String,
    #[serde(default)]
    pub priority: i64,
    #[serde(default)]
    pub is_validate_function: bool,
    /// A menu item implemented in native code: executable, but invisible to
    /// reflection, so `get-menu-items` does not list it (as in uLoopMCP).
    #[serde(default)]
    pub native: bool,
    /// What executing it does in the simulation.
    #[serde(default)]
    pub effect: MenuEffect,
}

/// The effects of menu items that matter to a client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum MenuEffect {
    /// Nothing observable.
    #[default]
    None,
    /// `Assets/Refresh`: import changes; changed scripts are compiled and, if
    /// they compile, the domain reloads.
    Refresh,
    /// `Edit/Play`: toggle play mode.
    TogglePlay,
    /// `Edit/Pause`: toggle pause.
    TogglePause,
    /// `GameObject/Create Empty`: a new root object named `GameObject`.
    CreateEmpty,
    /// Writes a console entry.
    Log {
        #[serde(rename = "logType")]
        log_type: LogType,
        message: String,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Asset {
    /// Project-relative path: `Assets/Scripts/Player.cs`, `Packages/…`.
    pub path: String,
    /// Unity type name: `MonoScript`, `Texture2D`, `SceneAsset` …
    #[serde(rename = "type")]
    pub asset_type: String,
    pub guid: String,
    #[serde(default)]
    pub size_bytes: u64,
    /// Last modification, ISO 8601.
    #[serde(default)]
    pub modified: String,
}

impl Asset {
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// Extension without the dot, lower case; empty for folders.
    pub fn extension(&self) -> String {
        match self.file_name().rsplit_once('.') {
            Some((_, ext)) => ext.to_ascii_lowercase(),
            None => String::new(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchProvider {
    pub id: String,
    pub display_name: String,
    #[serde(default)]
    pub description: String,
    pub priority: i64,
    pub is_active: bool,
    /// Query prefix selecting this provider, `p:`.
    #[serde(default)]
    pub filter_id: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditorWindow {
    pub name: String,
    pub width: u32,
    pub height: u32,
}

fn untagged() -> String {
    "Untagged".into()
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

/// Why a state file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl EditorStateFile {
    /// Loads a state file, resolving `extends`.
    pub fn load(path: &Path) -> Result<EditorStateFile, StateError> {
        let value = load_merged(path, 0)?;
        let state: EditorStateFile = serde_json::from_value(value)
            .map_err(|e| StateError::Invalid { path: path.to_owned(), message: e.to_string() })?;
        if state.format_version != FORMAT_VERSION {
            return Err(StateError::Invalid {
                path: path.to_owned(),
                message: format!("formatVersion {} is not supported (expected {FORMAT_VERSION})", state.format_version),
            });
        }
        state.validate().map_err(|message| StateError::Invalid { path: path.to_owned(), message })?;
        Ok(state)
    }

    /// Checks what serde cannot: unique instance ids and test names.
    pub fn validate(&self) -> Result<(), String> {
        let mut ids = std::collections::HashSet::new();
        let mut stack: Vec<&GameObject> = self.scene.roots.iter().collect();
        while let Some(go) = stack.pop() {
            if !ids.insert(go.instance_id) {
                return Err(format!("instanceId {} is used twice (second: {:?})", go.instance_id, go.name));
            }
            stack.extend(&go.children);
        }
        let mut names = std::collections::HashSet::new();
        for test in &self.tests {
            if !names.insert(&test.full_name) {
                return Err(format!("test {:?} is listed twice", test.full_name));
            }
        }
        Ok(())
    }
}

fn load_merged(path: &Path, depth: usize) -> Result<Value, StateError> {
    if depth > 8 {
        return Err(StateError::Invalid { path: path.to_owned(), message: "`extends` nests too deeply".into() });
    }
    let text = fs::read_to_string(path).map_err(|source| StateError::Io { path: path.to_owned(), source })?;
    let mut value: Value = serde_json::from_str(&text)
        .map_err(|e| StateError::Invalid { path: path.to_owned(), message: format!("invalid JSON: {e}") })?;
    let Some(obj) = value.as_object_mut() else {
        return Err(StateError::Invalid { path: path.to_owned(), message: "a state file is a JSON object".into() });
    };
    let Some(base) = obj.remove("extends") else {
        return Ok(value);
    };
    let Some(base) = base.as_str() else {
        return Err(StateError::Invalid { path: path.to_owned(), message: "`extends` must be a path".into() });
    };
    let base_path = path.parent().unwrap_or(Path::new(".")).join(base);
    let mut merged = load_merged(&base_path, depth + 1)?;
    merge(&mut merged, value);
    Ok(merged)
}

/// Merges `overlay` into `base`: objects key by key, `key+` appends to arrays,
/// anything else replaces.
pub fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                if let Some(name) = key.strip_suffix('+') {
                    if let (Some(Value::Array(items)), Value::Array(more)) = (base.get_mut(name), &value) {
                        items.extend(more.iter().cloned());
                        continue;
                    }
                    base.insert(name.to_owned(), value);
                    continue;
                }
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_objects_replace_scalars_append_arrays() {
        let mut base = json!({"a": {"x": 1, "y": [1]}, "list": [1, 2], "s": "old"});
        merge(&mut base, json!({"a": {"y": [9]}, "list+": [3], "s": "new", "n": true}));
        assert_eq!(base, json!({"a": {"x": 1, "y": [9]}, "list": [1, 2, 3], "s": "new", "n": true}));
    }

    #[test]
    fn diagnostics_print_as_unity_does() {
        let d = Diagnostic {
            severity: Severity::Error,
            file: "Assets/Scripts/A.cs".into(),
            line: 12,
            column: 5,
            code: "CS0103".into(),
            text: "The name 'y' does not exist in the current context".into(),
        };
        assert_eq!(
            d.unity_message(),
            "Assets/Scripts/A.cs(12,5): error CS0103: The name 'y' does not exist in the current context"
        );
    }
}

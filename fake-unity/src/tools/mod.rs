//! The tool catalogue (protocol §6): every tool's declaration (name,
//! description, parameters, annotations, deadline, security gate) and its
//! body, answered from the simulation.
//!
//! One file per area: [`internal`] (ping, client name, tool details, version,
//! sleep), [`console`], [`compile`], [`testing`], [`scene`], [`search`],
//! [`menu`], [`editor_ui`] (focus, play mode, screenshot), [`dynamic_code`].
//! These are the package's tools ([`package`]); [`uloop`] is uLoopMCP
//! 2.1.1's catalogue. An Editor has one [`Catalogue`] (its model's).

pub mod compile;
pub mod console;
pub mod dynamic_code;
pub mod editor_ui;
pub mod internal;
pub mod menu;
pub mod scene;
pub mod search;
pub mod testing;
pub mod uloop;

use std::{future::Future, pin::Pin, sync::Arc, sync::LazyLock};

use editor_link::{
    jsonrpc::{ErrorObject, Id, Message, Notification, notifications},
    methods,
    tool_details::{ToolAnnotations, ToolDetail},
};
use serde_json::{Map, Value, json};

use crate::{
    editor::{
        Client, Editor, ReloadOptions,
        model::{EditorKind, EditorModel},
    },
    journal::Step,
    params::{self, Args, Kind, Param},
};

/// What a tool call produced.
#[derive(Debug)]
pub enum Outcome {
    /// A result (`Ver` is added by the caller).
    Reply(Map<String, Value>),
    /// A JSON-RPC error.
    Fail(ErrorObject),
    /// A result, then something that happens after it was sent.
    ReplyThen(Map<String, Value>, After),
    /// The domain reloads before the result can be sent (a compile that
    /// changed scripts): the result is journaled for `x-resume`, nothing sent.
    ReloadBeforeReply(Map<String, Value>),
    /// The domain reloads now and the call goes on in the next one (a
    /// PlayMode test run, entering play mode): what is left of it, run by
    /// the Editor rather than the domain, its outcome journaled for
    /// `x-resume` and never sent on the connection that asked.
    GoesOnAfterReload(GoesOn),
}

/// The rest of a call that goes on after a domain reload, told where its
/// progress goes.
pub struct GoesOn(pub Box<dyn FnOnce(Progress) -> BoxFuture + Send>);

impl std::fmt::Debug for GoesOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GoesOn(..)")
    }
}

/// Effects that follow a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Reload the domain (entering play mode with domain reload on).
    Reload,
    /// Import changed scripts: compile them, and reload if they compile.
    Refresh,
    /// Reload the domain this way (a `reload` fault after the reply).
    ReloadWith(ReloadOptions),
    /// Crash this way (a `crash` fault after the reply).
    CrashWith(crate::editor::CrashOptions),
}

/// Security-controlled tools (the seeds' McpSecurityChecker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    None,
    Tests,
    MenuItems,
    DynamicCode,
}

type BoxFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// A tool body: synchronous (most tools answer from the simulation at once)
/// or asynchronous (tools that take time).
#[derive(Clone, Copy)]
pub enum Body {
    Sync(fn(&ToolCall) -> Outcome),
    Async(fn(ToolCall) -> BoxFuture),
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Body::Sync(_) => "Body::Sync",
            Body::Async(_) => "Body::Async",
        })
    }
}

/// How a tool is listed and how its parameters are read.
#[derive(Debug)]
pub enum ToolSchema {
    /// Protocol §6: the schema is built from the declared parameters, and
    /// values are checked against it ([`Args::parse`]).
    Declared,
    /// uLoopMCP 2.1.1: listed as its recorded `get-tool-details` entry;
    /// parameters read as Newtonsoft reads them into its C# schema class.
    Uloop(uloop::Binding),
}

/// One tool's declaration.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// Parameters in declaration order; `TimeoutSeconds` is always last.
    pub params: Vec<Param>,
    /// Internal tools: hidden from MCP tool lists unless asked for.
    pub dev_only: bool,
    pub annotations: ToolAnnotations,
    /// Default deadline (the `TimeoutSeconds` default), seconds.
    pub timeout_seconds: f64,
    pub gate: Gate,
    pub body: Body,
    pub schema: ToolSchema,
}

impl ToolSpec {
    /// The `get-tool-details` entry.
    pub fn detail(&self) -> ToolDetail {
        ToolDetail {
            name: self.name.to_owned(),
            description: self.description.to_owned(),
            parameter_schema: params::schema(&self.params),
            display_development_only: self.dev_only,
            annotations: Some(self.annotations.clone()),
            timeout_seconds: Some(self.timeout_seconds),
            extra: Map::new(),
        }
    }
}

/// What a tool body gets.
#[derive(Debug)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: &'static str,
    pub editor: Arc<Editor>,
    pub client: Arc<Client>,
    pub args: Args,
    pub progress: Progress,
}

/// Reports `notifications/progress` for one request (protocol §4,
/// extension): `progress` only grows, so a report that does not is
/// dropped, as the package's `ProgressReporter` drops it (a slowed tool's
/// own steps after its slowdown's seconds, say).
#[derive(Debug)]
pub enum Progress {
    /// To the client that asked; the highest progress sent to it, plus one
    /// (0: none yet), or `None` when every report goes out (the defect
    /// `progress-goes-back`).
    Client { client: Arc<Client>, request_id: Id, sent: Option<std::sync::atomic::AtomicU64> },
    /// Into the journal, for whoever resumes the call (a call carried
    /// across a reload, whose client went with the old domain); nowhere
    /// when the journal has lost it.
    Journal(Option<tokio::sync::watch::Sender<Option<Step>>>),
}

impl Progress {
    pub fn new(client: Arc<Client>, request_id: Id) -> Self {
        Progress::Client { client, request_id, sent: Some(std::sync::atomic::AtomicU64::new(0)) }
    }

    /// Reports that need not grow (the defect `progress-goes-back`).
    pub fn going_back(self) -> Self {
        match self {
            Progress::Client { client, request_id, .. } => Progress::Client { client, request_id, sent: None },
            journal => journal,
        }
    }

    pub fn report(&self, progress: u64, total: Option<u64>, message: &str) {
        match self {
            Progress::Client { client, request_id, sent } => {
                let next = progress.saturating_add(1);
                if sent.as_ref().is_some_and(|sent| sent.fetch_max(next, std::sync::atomic::Ordering::Relaxed) >= next)
                {
                    return;
                }
                let mut params = json!({"requestId": request_id.to_value(), "progress": progress});
                if let Some(total) = total {
                    params["total"] = total.into();
                }
                if !message.is_empty() {
                    params["message"] = message.into();
                }
                client.send(&Message::Notification(Notification::new(notifications::PROGRESS, params)));
            }
            Progress::Journal(Some(steps)) => {
                steps.send_replace(Some(Step { progress, total, message: message.to_owned() }));
            }
            Progress::Journal(None) => {}
        }
    }
}

/// Describes a tool in the catalogue below.
struct Declare {
    spec: ToolSpec,
}

impl Declare {
    fn new(name: &'static str, description: &'static str, body: Body) -> Self {
        Declare {
            spec: ToolSpec {
                name,
                description,
                params: Vec::new(),
                dev_only: false,
                annotations: ToolAnnotations::default(),
                timeout_seconds: 15.0,
                gate: Gate::None,
                body,
                schema: ToolSchema::Declared,
            },
        }
    }

    fn param(mut self, name: &'static str, kind: Kind, default: impl Into<Value>, description: &'static str) -> Self {
        self.spec.params.push(Param::new(name, kind, default, description));
        self
    }

    fn dev_only(mut self) -> Self {
        self.spec.dev_only = true;
        self
    }

    /// MCP hints: (read-only, destructive, idempotent).
    fn hints(mut self, read_only: bool, destructive: bool, idempotent: bool) -> Self {
        self.spec.annotations = ToolAnnotations {
            read_only_hint: Some(read_only),
            destructive_hint: Some(destructive),
            idempotent_hint: Some(idempotent),
            open_world_hint: Some(false),
        };
        self
    }

    fn timeout(mut self, seconds: f64) -> Self {
        self.spec.timeout_seconds = seconds;
        self
    }

    fn gate(mut self, gate: Gate) -> Self {
        self.spec.gate = gate;
        self
    }

    fn build(mut self) -> ToolSpec {
        let seconds = self.spec.timeout_seconds;
        // The description names the default, as uLoopMCP's base schema does.
        let description: &'static str =
            Box::leak(format!("Timeout for tool execution in seconds (default: {seconds} seconds)").into_boxed_str());
        self.spec.params.push(Param::new(
            "TimeoutSeconds",
            Kind::Float { min: 0.001, max: 86_400.0 },
            seconds,
            description,
        ));
        self.spec
    }
}

const POSITIVE: Kind = Kind::Int { min: 1, max: i32::MAX as i64 };
const NON_NEGATIVE: Kind = Kind::Int { min: 0, max: i32::MAX as i64 };

/// An Editor's tools, in the order `get-tool-details` lists them.
#[derive(Debug)]
pub struct Catalogue {
    tools: Vec<ToolSpec>,
}

impl Catalogue {
    pub fn new(tools: Vec<ToolSpec>) -> Catalogue {
        Catalogue { tools }
    }

    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The tool called `name` (exact, as uLoopMCP matches method names).
    pub fn find(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// The package's tools, public ones first.
static PACKAGE: LazyLock<Catalogue> = LazyLock::new(|| {
    use Body::{Async, Sync};
    Catalogue::new(vec![
        Declare::new(
            "compile",
            "Executes compilation after AssetDatabase.Refresh(). Returns compilation results with detailed timing information.",
            Async(compile::compile),
        )
        .param("ForceRecompile", Kind::Bool, false, "Whether to perform forced recompilation")
        .hints(false, false, true)
        .timeout(300.0)
        .build(),
        Declare::new(
            "get-logs",
            "Retrieves log information from the Unity console with filtering and search",
            Sync(console::get_logs),
        )
        .param("LogType", Kind::Enum(console::LOG_TYPES), "All", "Log type to filter")
        .param("MaxCount", NON_NEGATIVE, 100, "Maximum number of logs to retrieve")
        .param("SearchText", Kind::Str, "", "Text to search within log messages (retrieve all if empty)")
        .param("UseRegex", Kind::Bool, false, "Whether to use regular expression for search")
        .param("SearchInStackTrace", Kind::Bool, false, "Whether to search within stack trace as well")
        .param("IncludeStackTrace", Kind::Bool, true, "Whether to display stack traces")
        .hints(true, false, true)
        .build(),
        Declare::new(
            "run-tests",
            "Executes Unity Test Runner and retrieves test results with comprehensive reporting",
            Async(testing::run_tests),
        )
        .param("FilterType", Kind::Enum(testing::FILTER_TYPES), "all", "Type of test filter")
        .param("FilterValue", Kind::Str, "", "Filter value (specify when FilterType is other than all): exact = full test name, regex = class name or namespace pattern, assembly = assembly name")
        .param("TestMode", Kind::Enum(testing::TEST_MODES), "EditMode", "Test mode")
        .param("SaveXml", Kind::Bool, false, "Whether to save test results as NUnit XML under .uloop/outputs/TestResults/")
        .hints(false, false, true)
        .timeout(600.0)
        .gate(Gate::Tests)
        .build(),
        Declare::new("clear-console", "Clears Unity console logs for clean development workflow", Sync(console::clear_console))
            .param("AddConfirmationMessage", Kind::Bool, true, "Whether to add a confirmation log message after clearing")
            .hints(false, true, false)
            .build(),
        Declare::new(
            "find-game-objects",
            "Find multiple GameObjects with advanced search criteria (component type, tag, layer, etc.)",
            Sync(scene::find_game_objects),
        )
        .param("NamePattern", Kind::Str, "", "GameObject name pattern to search for")
        .param("SearchMode", Kind::Enum(scene::SEARCH_MODES), "Exact", "Search mode")
        .param("RequiredComponents", Kind::StrArray, json!([]), "Array of component type names that GameObjects must have")
        .param("Tag", Kind::Str, "", "Tag filter")
        .param("Layer", Kind::Int { min: 0, max: 31 }, Value::Null, "Layer filter")
        .param("IncludeInactive", Kind::Bool, false, "Whether to include inactive GameObjects")
        .param("MaxResults", POSITIVE, 20, "Maximum number of results to return")
        .param("IncludeInheritedProperties", Kind::Bool, false, "Whether to include inherited properties")
        .hints(true, false, true)
        .build(),
        Declare::new(
            "unity-search",
            "Search Unity project using Unity Search API with comprehensive filtering and export options",
            Sync(search::unity_search),
        )
        .param("SearchQuery", Kind::Str, "", "Search query string (supports Unity Search syntax), e.g. \"*.cs\", \"t:Texture2D\", \"Assets/Scripts/*.cs\"")
        .param("Providers", Kind::StrArray, json!([]), "Specific search providers to use (empty = all active providers)")
        .param("MaxResults", POSITIVE, 50, "Maximum number of search results to return")
        .param("IncludeDescription", Kind::Bool, true, "Whether to include detailed descriptions in results")
        .param("IncludeMetadata", Kind::Bool, false, "Whether to include file metadata (size, modified date)")
        .param("SearchFlags", Kind::Enum(search::SEARCH_FLAGS), "Default", "Search flags for controlling Unity Search behavior")
        .param("SaveToFile", Kind::Bool, false, "Whether to save search results to an external file instead of returning them")
        .param("OutputFormat", Kind::Enum(search::OUTPUT_FORMATS), "JSON", "Output file format when SaveToFile is enabled")
        .param("AutoSaveThreshold", NON_NEGATIVE, 100, "Save results to a file automatically above this many results (0 disables)")
        .param("FileExtensions", Kind::StrArray, json!([]), "Filter results by file extension (e.g., \"cs\", \"prefab\", \"mat\")")
        .param("AssetTypes", Kind::StrArray, json!([]), "Filter results by asset type (e.g., \"Texture2D\", \"GameObject\", \"MonoScript\")")
        .param("PathFilter", Kind::Str, "", "Filter results by path pattern (supports wildcards)")
        .hints(true, false, true)
        .build(),
        Declare::new(
            "get-hierarchy",
            "Get Unity Hierarchy structure in nested JSON format for AI-friendly processing",
            Sync(scene::get_hierarchy),
        )
        .param("IncludeInactive", Kind::Bool, true, "Whether to include inactive GameObjects in the hierarchy result")
        .param("MaxDepth", Kind::Int { min: -1, max: i32::MAX as i64 }, -1, "Maximum depth to traverse the hierarchy (-1 for unlimited depth)")
        .param("RootPath", Kind::Str, Value::Null, "Root GameObject path to start hierarchy traversal from (empty/null for all root objects)")
        .param("IncludeComponents", Kind::Bool, true, "Whether to include component information for each GameObject in the hierarchy")
        .param("MaxResponseSizeKB", Kind::Float { min: 0.0, max: 1e9 }, 100.0, "Maximum response size in KB before saving to file")
        .hints(true, false, true)
        .build(),
        Declare::new(
            "get-provider-details",
            "Get detailed information about Unity Search providers including display names, descriptions, active status, and capabilities",
            Sync(search::get_provider_details),
        )
        .param("ProviderId", Kind::Str, "", "Specific provider ID to get details for (empty = all providers)")
        .param("ActiveOnly", Kind::Bool, false, "Whether to include only active providers")
        .param("SortByPriority", Kind::Bool, true, "Sort providers by priority (lower number = higher priority)")
        .param("IncludeDescriptions", Kind::Bool, true, "Include detailed descriptions for each provider")
        .hints(true, false, true)
        .build(),
        Declare::new(
            "get-menu-items",
            "Retrieve Unity MenuItems with detailed metadata for programmatic execution",
            Sync(menu::get_menu_items),
        )
        .param("FilterText", Kind::Str, "", "Text to filter MenuItem paths (empty for all items)")
        .param("FilterType", Kind::Enum(menu::FILTER_TYPES), "contains", "Type of filter to apply")
        .param("IncludeValidation", Kind::Bool, false, "Include validation functions in the results")
        .param("MaxCount", POSITIVE, 200, "Maximum number of menu items to retrieve")
        .hints(true, false, true)
        .build(),
        Declare::new("execute-menu-item", "Execute Unity MenuItem by path", Sync(menu::execute_menu_item))
            .param("MenuItemPath", Kind::Str, "", "The menu item path to execute (e.g., \"GameObject/Create Empty\")")
            .param("UseReflectionFallback", Kind::Bool, true, "Whether to use reflection as fallback if EditorApplication.ExecuteMenuItem fails")
            .hints(false, true, false)
            .gate(Gate::MenuItems)
            .build(),
        Declare::new(
            "execute-dynamic-code",
            "Execute C# code dynamically within Unity Editor. Implements security levels and automatic using statement processing with enhanced error messaging",
            Async(dynamic_code::execute),
        )
        .param("Code", Kind::Str, "", "The C# code to execute")
        .param("Parameters", Kind::Object, json!({}), "Runtime parameters for execution")
        .param("CompileOnly", Kind::Bool, false, "Only compile, do not execute")
        .hints(false, true, false)
        .timeout(60.0)
        .gate(Gate::DynamicCode)
        .build(),
        Declare::new("focus-window", "Brings Unity Editor window to front on macOS and Windows", Sync(editor_ui::focus_window))
            .hints(false, false, true)
            .build(),
        Declare::new("control-play-mode", "Controls Unity Editor play mode (Play, Stop, Pause)", Sync(editor_ui::control_play_mode))
            .param("Action", Kind::Enum(editor_ui::PLAY_ACTIONS), "Play", "Play mode action")
            .hints(false, false, true)
            .build(),
        Declare::new("screenshot", "Captures an Editor window (Game, Scene …) as a PNG file", Sync(editor_ui::screenshot))
            .param("WindowName", Kind::Str, "Game", "Name of the window to capture")
            .param("ResolutionScale", Kind::Float { min: 0.1, max: 1.0 }, 1.0, "Scale of the captured image (0.1 to 1.0)")
            .param("IncludeImageData", Kind::Bool, false, "Also return the PNG as base64 in ImageDataBase64")
            .hints(true, false, false)
            .build(),
        Declare::new(methods::PING, "Connection test and message echo", Sync(internal::ping))
            .param("Message", Kind::Str, "", "Message to send to Unity")
            .dev_only()
            .hints(true, false, true)
            .build(),
        Declare::new(methods::SET_CLIENT_NAME, "Register client name for identification in Unity", Sync(internal::set_client_name))
            .param("ClientName", Kind::Str, "Unknown Client", "Name of the MCP client tool")
            .dev_only()
            .hints(false, false, true)
            .build(),
        Declare::new(methods::GET_TOOL_DETAILS, "Retrieve detailed information about all registered Unity tools", Sync(internal::get_tool_details))
            .param("IncludeDevelopmentOnly", Kind::Bool, false, "Whether to include development-only tools")
            .dev_only()
            .hints(true, false, true)
            .build(),
        Declare::new(methods::GET_VERSION, "Get Unity version, platform and package information", Sync(internal::get_version))
            .dev_only()
            .hints(true, false, true)
            .build(),
        Declare::new("debug-sleep", "Debug tool that sleeps for specified duration to test timeout functionality", Async(internal::debug_sleep))
            .param("SleepSeconds", Kind::Float { min: 0.0, max: 86_400.0 }, 15.0, "Number of seconds to sleep for testing purposes")
            .dev_only()
            .hints(true, false, true)
            .timeout(10.0)
            .build(),
    ])
});

/// The package's catalogue (this project's Unity package).
pub fn package() -> &'static Catalogue {
    &PACKAGE
}

/// The catalogue of the Editor `model` plays.
pub fn catalogue_of(model: &EditorModel) -> &'static Catalogue {
    match model.kind {
        EditorKind::Package => package(),
        EditorKind::Uloop211 => uloop::catalogue(),
        EditorKind::Uloop3 => uloop::v3::catalogue(),
    }
}

/// The tool `editor` offers as `name`: in its catalogue (exact, as both
/// Editors match method names), not taken away by a `toolsChange` fault.
pub fn find(editor: &Editor, name: &str) -> Option<&'static ToolSpec> {
    catalogue_of(&editor.model).find(name).filter(|t| editor.tool_available(t.name))
}

/// The tools `get-tool-details` lists, in catalogue order: internal ones
/// only when asked for, none a fault took away, no public one turned off in
/// the settings (calling that one still says it is disabled).
pub fn offered(editor: &Editor, include_dev: bool) -> Vec<&'static ToolSpec> {
    let disabled = editor.sim().settings.disabled_tools.clone();
    catalogue_of(&editor.model)
        .tools()
        .iter()
        .filter(|t| include_dev || !t.dev_only)
        .filter(|t| editor.tool_available(t.name))
        .filter(|t| t.dev_only || !disabled.iter().any(|d| d == t.name))
        .collect()
}

/// Runs a tool body.
pub async fn run(tool: &'static ToolSpec, call: ToolCall) -> Outcome {
    match tool.body {
        Body::Sync(f) => f(&call),
        Body::Async(f) => f(call).await,
    }
}

/// Carries out what follows a reply.
pub async fn after_reply(editor: &Arc<Editor>, after: After) {
    match after {
        After::Reload => editor.request_reload(ReloadOptions::default(), None),
        After::Refresh => compile::refresh(editor).await,
        After::ReloadWith(options) => editor.request_reload(options, None),
        After::CrashWith(options) => editor.request_crash(options, None),
    }
}

/// A `-32602` error naming `param` (protocol §3).
pub fn invalid_param(param: &str, detail: String) -> Outcome {
    Outcome::Fail(
        ErrorObject::new(editor_link::jsonrpc::ErrorKind::InvalidParams, detail).with_data("parameter", param),
    )
}

/// Builds a result object from `(name, value)` pairs, in order.
pub fn result<const N: usize>(fields: [(&str, Value); N]) -> Map<String, Value> {
    fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// Converts a simple wildcard pattern (`*`, `?`) to an anchored regex.
pub fn wildcard_regex(pattern: &str, case_insensitive: bool) -> regex::Regex {
    let mut re = String::from(if case_insensitive { "(?i)^" } else { "^" });
    for c in pattern.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    // Every character is escaped, so the pattern always compiles.
    regex::Regex::new(&re).unwrap_or_else(|_| regex::Regex::new("^$").expect("empty pattern"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn catalogue_is_complete_and_consistent() {
        let names: Vec<_> = package().tools().iter().map(|t| t.name).collect();
        let expected = [
            "compile",
            "get-logs",
            "run-tests",
            "clear-console",
            "find-game-objects",
            "unity-search",
            "get-hierarchy",
            "get-provider-details",
            "get-menu-items",
            "execute-menu-item",
            "execute-dynamic-code",
            "focus-window",
            "control-play-mode",
            "screenshot",
            methods::PING,
            methods::SET_CLIENT_NAME,
            methods::GET_TOOL_DETAILS,
            methods::GET_VERSION,
            "debug-sleep",
        ];
        assert_eq!(names, expected);
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), names.len());
        for tool in package().tools() {
            let detail = tool.detail();
            let props = &detail.parameter_schema.properties;
            assert_eq!(props.keys().last().map(String::as_str), Some("TimeoutSeconds"), "{}", tool.name);
            for (name, prop) in props {
                if let (Some(values), Some(default)) = (&prop.enum_values, &prop.default_value) {
                    assert!(values.iter().any(|v| default == v), "{}.{name}: default {default} not in enum", tool.name);
                }
                assert!(name.chars().next().unwrap().is_ascii_uppercase(), "{}.{name} is not PascalCase", tool.name);
            }
        }
    }

    #[test]
    fn wildcards() {
        let re = wildcard_regex("Assets/Scripts/*.cs", true);
        assert!(re.is_match("assets/scripts/Player.cs"));
        assert!(!re.is_match("Assets/Scripts/Player.csx"));
        assert!(wildcard_regex("Enemy_0?", false).is_match("Enemy_01"));
        assert!(wildcard_regex("a.b", false).is_match("a.b") && !wildcard_regex("a.b", false).is_match("axb"));
    }
}

//! uLoopMCP 2.1.1's tool catalogue: its 15 public tools and 5 internal
//! ones, listed exactly as the real server lists them (the recorded
//! `get-tool-details` answer, `fixtures/editor-models/uloop-2.1.1.tool-details.json`,
//! in its order), each with the C# schema Newtonsoft reads its parameters
//! into ([`newtonsoft`]) and its body, answered from the simulation as
//! uLoopMCP's tools answer (`Packages/src/Editor/Api/McpTools/` at v2.1.1).
//!
//! - [`newtonsoft`] — parameters read as Newtonsoft reads them.
//! - [`compile`] — `compile`, with `WaitForDomainReload`'s result file and
//!   the lock files.
//! - [`console`] — `get-logs`, `clear-console`.
//! - [`editor_ui`] — `screenshot`, `execute-dynamic-code`.
//! - [`input`] — the PlayMode input tools: `record-input`, `replay-input`,
//!   `simulate-keyboard`, `simulate-mouse-input`, `simulate-mouse-ui`.
//! - [`scene`] — `find-game-objects`, `get-hierarchy`.
//! - [`testing`] — `run-tests`.
//! - [`internal`] — `ping`, `set-client-name`, `get-version`,
//!   `get-tool-details`, `debug-sleep`, `focus-window`, `control-play-mode`.
//!
//! Not simulated yet (it answers that, in uLoopMCP's first error shape):
//! `simulate-mouse-ui` on a scene with an EventSystem.

pub mod compile;
pub mod console;
pub mod editor_ui;
pub mod input;
pub mod internal;
pub mod newtonsoft;
pub mod scene;
pub mod testing;
pub mod v3;

use std::sync::LazyLock;

use editor_link::methods;
use serde_json::Value;

use super::{Body, Catalogue, Gate, ToolSchema, ToolSpec};

/// `McpVersion.VERSION`: `Ver` in every result.
pub const VERSION: &str = crate::editor::model::ULOOP_VERSION;

/// The namespace of 2.1.1's schema classes and enums.
const NAMESPACE: &str = "io.github.hatayama.uLoopMCP";

/// The real server's `get-tool-details` answer with development-only tools.
pub(crate) const TOOL_DETAILS: &str = include_str!("../../../../fixtures/editor-models/uloop-2.1.1.tool-details.json");

/// A C# property type of a tool's schema class, as Newtonsoft converts into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsType {
    Bool,
    /// `int` (and `int?`).
    Int,
    /// `float`.
    Float,
    Str,
    /// A C# enum of `io.github.hatayama.uLoopMCP`: its name and values.
    Enum {
        type_name: &'static str,
        values: &'static [(&'static str, i64)],
    },
    StrArray,
    /// `Dictionary<string, object>`.
    Dict,
}

/// One property of a schema class.
#[derive(Clone, Debug)]
pub struct CsParam {
    pub name: &'static str,
    pub ty: CsType,
    /// Its value on a new schema object (the listed `DefaultValue`; enums
    /// as their integer).
    pub default: Value,
}

/// How a uLoopMCP tool is listed and how its parameters are read.
#[derive(Debug)]
pub struct Binding {
    /// The schema class, as Newtonsoft names it in errors.
    pub schema_type: String,
    /// The namespace of its enums, as Newtonsoft names them in errors.
    pub namespace: &'static str,
    pub params: Vec<CsParam>,
    /// The recorded `get-tool-details` entry.
    pub listing: Value,
}

const PLAY_MODE_ACTION: &[(&str, i64)] = &[("Play", 0), ("Stop", 1), ("Pause", 2)];
const RUN_TEST_MODE: &[(&str, i64)] = &[("EditMode", 1), ("PlayMode", 2)];
const TEST_FILTER_TYPE: &[(&str, i64)] = &[("all", 0), ("exact", 1), ("regex", 2), ("assembly", 3)];
const SEARCH_MODE: &[(&str, i64)] = &[("Exact", 0), ("Path", 1), ("Regex", 2), ("Contains", 3), ("Selected", 4)];
const RECORD_INPUT_ACTION: &[(&str, i64)] = &[("Start", 0), ("Stop", 1)];
const REPLAY_INPUT_ACTION: &[(&str, i64)] = &[("Start", 0), ("Stop", 1), ("Status", 2)];
const KEYBOARD_ACTION: &[(&str, i64)] = &[("Press", 0), ("KeyDown", 1), ("KeyUp", 2)];
const MOUSE_INPUT_ACTION: &[(&str, i64)] =
    &[("Click", 0), ("LongPress", 1), ("MoveDelta", 2), ("Scroll", 3), ("SmoothDelta", 4)];
const MOUSE_BUTTON: &[(&str, i64)] = &[("Left", 0), ("Right", 1), ("Middle", 2)];
const MOUSE_ACTION: &[(&str, i64)] =
    &[("Click", 0), ("Drag", 1), ("DragStart", 2), ("DragMove", 3), ("DragEnd", 4), ("LongPress", 5)];
const WINDOW_MATCH_MODE: &[(&str, i64)] = &[("exact", 0), ("prefix", 1), ("contains", 2)];
const CAPTURE_MODE: &[(&str, i64)] = &[("window", 0), ("rendering", 1)];

const fn enumeration(type_name: &'static str, values: &'static [(&'static str, i64)]) -> CsType {
    CsType::Enum { type_name, values }
}

/// Each tool: name, schema class, properties in declaration order (those
/// `get-tool-details` hides last), body.
pub(crate) type Declaration = (&'static str, &'static str, Vec<(&'static str, CsType)>, Body);

pub(crate) fn declarations() -> Vec<Declaration> {
    use Body::{Async, Sync};
    use CsType::{Bool, Dict, Float, Int, Str, StrArray};
    vec![
        ("clear-console", "ClearConsoleSchema", vec![("AddConfirmationMessage", Bool)], Sync(console::clear_console)),
        (
            "control-play-mode",
            "ControlPlayModeSchema",
            vec![("Action", enumeration("PlayModeAction", PLAY_MODE_ACTION))],
            Sync(internal::control_play_mode),
        ),
        ("debug-sleep", "SleepSchema", vec![("SleepSeconds", Int)], Async(internal::debug_sleep)),
        ("focus-window", "FocusUnityWindowSchema", vec![], Sync(internal::focus_window)),
        (
            methods::GET_TOOL_DETAILS,
            "GetToolDetailsSchema",
            vec![("IncludeDevelopmentOnly", Bool)],
            Sync(internal::get_tool_details),
        ),
        (
            "get-logs",
            "GetLogsSchema",
            vec![
                ("LogType", Str),
                ("MaxCount", Int),
                ("SearchText", Str),
                ("UseRegex", Bool),
                ("SearchInStackTrace", Bool),
                ("IncludeStackTrace", Bool),
            ],
            Sync(console::get_logs),
        ),
        (methods::GET_VERSION, "GetVersionSchema", vec![], Sync(internal::get_version)),
        (methods::PING, "PingSchema", vec![("Message", Str)], Sync(internal::ping)),
        (
            "record-input",
            "RecordInputSchema",
            vec![
                ("Action", enumeration("RecordInputAction", RECORD_INPUT_ACTION)),
                ("OutputPath", Str),
                ("Keys", Str),
                ("DelaySeconds", Int),
                ("ShowOverlay", Bool),
            ],
            Async(input::record_input),
        ),
        (
            "replay-input",
            "ReplayInputSchema",
            vec![
                ("Action", enumeration("ReplayInputAction", REPLAY_INPUT_ACTION)),
                ("InputPath", Str),
                ("ShowOverlay", Bool),
                ("Loop", Bool),
            ],
            Sync(input::replay_input),
        ),
        (methods::SET_CLIENT_NAME, "SetClientNameSchema", vec![("ClientName", Str)], Sync(internal::set_client_name)),
        (
            "simulate-keyboard",
            "SimulateKeyboardSchema",
            vec![("Action", enumeration("KeyboardAction", KEYBOARD_ACTION)), ("Key", Str), ("Duration", Float)],
            Sync(input::simulate_keyboard),
        ),
        (
            "simulate-mouse-input",
            "SimulateMouseInputSchema",
            vec![
                ("Action", enumeration("MouseInputAction", MOUSE_INPUT_ACTION)),
                ("X", Float),
                ("Y", Float),
                ("Button", enumeration("MouseButton", MOUSE_BUTTON)),
                ("Duration", Float),
                ("DeltaX", Float),
                ("DeltaY", Float),
                ("ScrollX", Float),
                ("ScrollY", Float),
            ],
            Sync(input::simulate_mouse_input),
        ),
        (
            "compile",
            "CompileSchema",
            vec![("ForceRecompile", Bool), ("WaitForDomainReload", Bool), ("RequestId", Str)],
            Async(compile::compile),
        ),
        (
            "run-tests",
            "RunTestsSchema",
            vec![
                ("TestMode", enumeration("RunTestMode", RUN_TEST_MODE)),
                ("FilterType", enumeration("TestFilterType", TEST_FILTER_TYPE)),
                ("FilterValue", Str),
                ("SaveBeforeRun", Bool),
            ],
            Async(testing::run_tests),
        ),
        (
            "execute-dynamic-code",
            "ExecuteDynamicCodeSchema",
            vec![("Code", Str), ("Parameters", Dict), ("CompileOnly", Bool), ("YieldToForegroundRequests", Bool)],
            Sync(editor_ui::execute_dynamic_code),
        ),
        (
            "screenshot",
            "ScreenshotSchema",
            vec![
                ("WindowName", Str),
                ("ResolutionScale", Float),
                ("MatchMode", enumeration("WindowMatchMode", WINDOW_MATCH_MODE)),
                ("OutputDirectory", Str),
                ("CaptureMode", enumeration("CaptureMode", CAPTURE_MODE)),
                ("AnnotateElements", Bool),
                ("ElementsOnly", Bool),
            ],
            Sync(editor_ui::screenshot),
        ),
        (
            "simulate-mouse-ui",
            "SimulateMouseUiSchema",
            vec![
                ("Action", enumeration("MouseAction", MOUSE_ACTION)),
                ("X", Float),
                ("Y", Float),
                ("FromX", Float),
                ("FromY", Float),
                ("DragSpeed", Float),
                ("Duration", Float),
                ("Button", enumeration("MouseButton", MOUSE_BUTTON)),
                ("BypassRaycast", Bool),
                ("TargetPath", Str),
                ("DropTargetPath", Str),
            ],
            Sync(input::simulate_mouse_ui),
        ),
        (
            "find-game-objects",
            "FindGameObjectsSchema",
            vec![
                ("NamePattern", Str),
                ("SearchMode", enumeration("SearchMode", SEARCH_MODE)),
                ("RequiredComponents", StrArray),
                ("Tag", Str),
                ("Layer", Int),
                ("IncludeInactive", Bool),
                ("MaxResults", Int),
                ("IncludeInheritedProperties", Bool),
            ],
            Sync(scene::find_game_objects),
        ),
        (
            "get-hierarchy",
            "GetHierarchySchema",
            vec![
                ("IncludeInactive", Bool),
                ("MaxDepth", Int),
                ("RootPath", Str),
                ("IncludeComponents", Bool),
                ("IncludePaths", Bool),
                ("UseComponentsLut", Str),
                ("UseSelection", Bool),
            ],
            Sync(scene::get_hierarchy),
        ),
    ]
}

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(|| {
    let recorded: Value =
        serde_json::from_str(TOOL_DETAILS).expect("the recorded tool details are JSON (a test reads them)");
    let listings = recorded["Tools"].as_array().cloned().unwrap_or_default();
    let tools = declarations()
        .into_iter()
        .map(|(name, schema, params, body)| {
            let listing = listings.iter().find(|t| t["name"] == name).cloned().unwrap_or(Value::Null);
            let properties = &listing["parameterSchema"]["Properties"];
            let params = params
                .into_iter()
                .map(|(param, ty)| CsParam { name: param, ty, default: properties[param]["DefaultValue"].clone() })
                .collect();
            ToolSpec {
                name,
                description: "",
                params: Vec::new(),
                dev_only: listing["displayDevelopmentOnly"] == true,
                annotations: Default::default(),
                timeout_seconds: 0.0,
                gate: Gate::None,
                body,
                schema: ToolSchema::Uloop(Binding {
                    schema_type: format!("{NAMESPACE}.{schema}"),
                    namespace: NAMESPACE,
                    params,
                    listing,
                }),
            }
        })
        .collect();
    Catalogue::new(tools)
});

/// uLoopMCP 2.1.1's catalogue.
pub fn catalogue() -> &'static Catalogue {
    &CATALOGUE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_the_recorded_one_with_every_property_bound() {
        let recorded: Value = serde_json::from_str(TOOL_DETAILS).unwrap();
        let listed: Vec<&str> =
            recorded["Tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        let ours: Vec<&str> = catalogue().tools().iter().map(|t| t.name).collect();
        assert_eq!(ours, listed, "the recorded order");
        assert_eq!(ours.len(), 20);
        assert_eq!(catalogue().tools().iter().filter(|t| !t.dev_only).count(), 15);
        for tool in catalogue().tools() {
            let ToolSchema::Uloop(binding) = &tool.schema else { panic!("{} is not uLoopMCP's", tool.name) };
            let listed: Vec<&String> =
                binding.listing["parameterSchema"]["Properties"].as_object().unwrap().keys().collect();
            let bound: Vec<&str> = binding.params.iter().map(|p| p.name).filter(|n| *n != "RequestId").collect();
            assert_eq!(listed, bound, "{}: the schema class's properties, in order", tool.name);
            for param in &binding.params {
                if let CsType::Enum { values, .. } = param.ty {
                    let names: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
                    let listed = &binding.listing["parameterSchema"]["Properties"][param.name]["Enum"];
                    assert_eq!(listed, &serde_json::json!(names), "{}.{}", tool.name, param.name);
                    assert!(values.iter().any(|(_, v)| param.default == *v), "{}.{}: default", tool.name, param.name);
                }
            }
        }
    }
}

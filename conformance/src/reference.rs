//! What the protocol reference (§6, after the seeds' tool reference) says
//! each tool takes and answers. Written from the documents, not from the
//! fake: the cases compare any Editor with this.

use editor_link::methods;

/// A parameter's JSON type as `get-tool-details` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    String,
    Boolean,
    Number,
    Array,
    Object,
}

impl Type {
    pub fn name(self) -> &'static str {
        match self {
            Type::String => "string",
            Type::Boolean => "boolean",
            Type::Number => "number",
            Type::Array => "array",
            Type::Object => "object",
        }
    }

    /// A value of some other type, which the Editor must refuse.
    pub fn wrong_value(self) -> serde_json::Value {
        match self {
            Type::String => serde_json::json!({"not": "a string"}),
            Type::Boolean => serde_json::json!("yes"),
            Type::Number => serde_json::json!("ten"),
            Type::Array => serde_json::json!(5),
            Type::Object => serde_json::json!("not an object"),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ParamRef {
    pub name: &'static str,
    pub ty: Type,
    /// The enum's names, when it is one.
    pub values: &'static [&'static str],
}

#[derive(Clone, Copy, Debug)]
pub struct ToolRef {
    pub name: &'static str,
    /// `displayDevelopmentOnly`.
    pub internal: bool,
    pub params: &'static [ParamRef],
    /// Arguments for a call that is harmless in a test project.
    pub call_with: &'static str,
    /// Fields every successful result has (besides `Ver`).
    pub result: &'static [&'static str],
}

impl ToolRef {
    /// What a case about this tool checks: an internal tool is the
    /// protocol's (every Editor of it has one); a public one belongs to the
    /// package's catalogue.
    pub fn requires(&self) -> crate::case::Requires {
        match self.internal {
            true => crate::case::Requires::tools(&[self.name]),
            false => crate::case::Requires::catalogue_tool(self.name),
        }
    }
}

const fn p(name: &'static str, ty: Type) -> ParamRef {
    ParamRef { name, ty, values: &[] }
}

const fn e(name: &'static str, values: &'static [&'static str]) -> ParamRef {
    ParamRef { name, ty: Type::String, values }
}

use Type::*;

/// Every tool of §6, internal first.
pub const TOOLS: &[ToolRef] = &[
    ToolRef {
        name: methods::PING,
        internal: true,
        params: &[p("Message", String)],
        call_with: r#"{"Message":"conformance"}"#,
        result: &["Message"],
    },
    ToolRef {
        name: methods::SET_CLIENT_NAME,
        internal: true,
        params: &[p("ClientName", String)],
        call_with: r#"{"ClientName":"unity-conformance"}"#,
        result: &["Message", "ClientName"],
    },
    ToolRef {
        name: methods::GET_TOOL_DETAILS,
        internal: true,
        params: &[p("IncludeDevelopmentOnly", Boolean)],
        call_with: "{}",
        result: &["Tools"],
    },
    ToolRef {
        name: methods::GET_VERSION,
        internal: true,
        params: &[],
        call_with: "{}",
        result: &["UnityVersion", "Platform", "DataPath", "ProductName", "PackageVersion"],
    },
    ToolRef {
        name: "debug-sleep",
        internal: true,
        params: &[p("SleepSeconds", Number)],
        call_with: r#"{"SleepSeconds":0.05}"#,
        result: &["Message", "ActualSleepSeconds", "WasCancelled"],
    },
    ToolRef {
        name: "compile",
        internal: false,
        params: &[p("ForceRecompile", Boolean)],
        call_with: "{}",
        result: &["Success", "ErrorCount", "WarningCount", "CompletedAt", "Errors", "Warnings"],
    },
    ToolRef {
        name: "get-logs",
        internal: false,
        params: &[
            e("LogType", &["Error", "Warning", "Log", "All"]),
            p("MaxCount", Number),
            p("SearchText", String),
            p("UseRegex", Boolean),
            p("SearchInStackTrace", Boolean),
            p("IncludeStackTrace", Boolean),
        ],
        call_with: "{}",
        result: &["TotalCount", "DisplayedCount", "LogType", "MaxCount", "SearchText", "IncludeStackTrace", "Logs"],
    },
    ToolRef {
        name: "run-tests",
        internal: false,
        params: &[
            e("FilterType", &["all", "exact", "regex", "assembly"]),
            p("FilterValue", String),
            e("TestMode", &["EditMode", "PlayMode"]),
            p("SaveXml", Boolean),
        ],
        call_with: "{}",
        result: &[
            "Success",
            "Message",
            "CompletedAt",
            "TestCount",
            "PassedCount",
            "FailedCount",
            "SkippedCount",
            "XmlPath",
        ],
    },
    ToolRef {
        name: "clear-console",
        internal: false,
        params: &[p("AddConfirmationMessage", Boolean)],
        call_with: "{}",
        result: &["Success", "ClearedLogCount", "ClearedCounts", "Message"],
    },
    ToolRef {
        name: "find-game-objects",
        internal: false,
        params: &[
            p("NamePattern", String),
            e("SearchMode", &["Exact", "Path", "Regex", "Contains"]),
            p("RequiredComponents", Array),
            p("Tag", String),
            p("Layer", Number),
            p("IncludeInactive", Boolean),
            p("MaxResults", Number),
            p("IncludeInheritedProperties", Boolean),
        ],
        call_with: r#"{"NamePattern":"Main Camera"}"#,
        result: &["results", "totalFound"],
    },
    ToolRef {
        name: "unity-search",
        internal: false,
        params: &[
            p("SearchQuery", String),
            p("Providers", Array),
            p("MaxResults", Number),
            p("IncludeDescription", Boolean),
            p("IncludeMetadata", Boolean),
            p("SearchFlags", String),
            p("SaveToFile", Boolean),
            e("OutputFormat", &["JSON", "CSV", "TSV"]),
            p("AutoSaveThreshold", Number),
            p("FileExtensions", Array),
            p("AssetTypes", Array),
            p("PathFilter", String),
        ],
        call_with: r#"{"SearchQuery":"t:Scene"}"#,
        result: &["Results", "TotalCount", "DisplayedCount", "SearchQuery", "ProvidersUsed", "Success"],
    },
    ToolRef {
        name: "get-hierarchy",
        internal: false,
        params: &[
            p("IncludeInactive", Boolean),
            p("MaxDepth", Number),
            p("RootPath", String),
            p("IncludeComponents", Boolean),
            p("MaxResponseSizeKB", Number),
        ],
        call_with: "{}",
        result: &["context"],
    },
    ToolRef {
        name: "get-provider-details",
        internal: false,
        params: &[
            p("ProviderId", String),
            p("ActiveOnly", Boolean),
            p("SortByPriority", Boolean),
            p("IncludeDescriptions", Boolean),
        ],
        call_with: "{}",
        result: &["Providers", "TotalCount", "ActiveCount", "InactiveCount", "Success"],
    },
    ToolRef {
        name: "get-menu-items",
        internal: false,
        params: &[
            p("FilterText", String),
            e("FilterType", &["contains", "exact", "startswith"]),
            p("IncludeValidation", Boolean),
            p("MaxCount", Number),
        ],
        call_with: "{}",
        result: &["MenuItems", "TotalCount", "FilteredCount", "AppliedFilter", "AppliedFilterType"],
    },
    ToolRef {
        name: "execute-menu-item",
        internal: false,
        params: &[p("MenuItemPath", String), p("UseReflectionFallback", Boolean)],
        call_with: r#"{"MenuItemPath":"Window/General/Console"}"#,
        result: &["MenuItemPath", "Success", "ExecutionMethod", "MenuItemFound"],
    },
    ToolRef {
        name: "execute-dynamic-code",
        internal: false,
        params: &[p("Code", String), p("Parameters", Object), p("CompileOnly", Boolean)],
        call_with: r#"{"Code":"return 1 + 1;","CompileOnly":true}"#,
        result: &["Success", "CompilationErrors", "SecurityLevel"],
    },
    ToolRef { name: "focus-window", internal: false, params: &[], call_with: "{}", result: &["Success", "Message"] },
    ToolRef {
        name: "control-play-mode",
        internal: false,
        params: &[e("Action", &["Play", "Stop", "Pause"])],
        call_with: r#"{"Action":"Stop"}"#,
        result: &["IsPlaying", "IsPaused", "Message"],
    },
    ToolRef {
        name: "screenshot",
        internal: false,
        params: &[p("WindowName", String), p("ResolutionScale", Number), p("IncludeImageData", Boolean)],
        call_with: r#"{"ResolutionScale":0.25}"#,
        result: &["Screenshots", "ScreenshotCount"],
    },
];

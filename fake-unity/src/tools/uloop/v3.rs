//! uLoopMCP 3's ("Unity CLI Loop") tool catalogue, as its Editor has it at
//! hatayama/uLoopMCP c50f54c (branch `v3-beta`, `docs/uloop-3-wire.md` §7):
//!
//! - The 14 first-party tools of `Packages/src/Editor/FirstPartyTools/`
//!   (`*Tool.cs`, `*Schema.cs`). Their schema classes have the same
//!   properties, defaults and enums as 2.1.1's, so their declarations and
//!   bodies are 2.1.1's ([`super::declarations`]), bound in v3's namespace
//!   `io.github.hatayama.UnityCliLoop.FirstPartyTools`.
//! - Two internal bridge commands, `get-version` and `get-tool-details`
//!   (`ED/Infrastructure/Api/*BridgeCommand.cs`): never listed, never
//!   disabled or blocked. `ping`, `set-client-name`, `debug-sleep` and
//!   `focus-window` are gone (an unknown tool).
//!
//! A listing (`ToolInfo`, `UnityCliLoopToolRegistry.cs:289-303`) has only
//! `name`, `parameterSchema` and `displayDevelopmentOnly` (no
//! `description`). None of the first-party schemas has a `[Description]`,
//! so every property is described `Parameter: <Name>`
//! (`UnityCliLoopToolParameterSchemaGenerator.GetDescription`); types,
//! defaults (an enum's as its integer: Newtonsoft without a string-enum
//! converter) and enum names are 2.1.1's recorded ones, which the generator
//! makes the same way. `Required` is empty (no `[Required]`).
//!
//! Inferred, not read: the listing order. The registry keeps tools in the
//! order reflection finds their classes; the model lists them by their
//! folder's name, the order Unity compiles the files in.

use std::sync::LazyLock;

use editor_link::{dialect::ULOOP_3, methods};
use serde_json::{Map, Value, json};

use super::{Binding, CsParam, TOOL_DETAILS, declarations, internal};
use crate::tools::{Body, Catalogue, Gate, ToolSchema, ToolSpec};

/// The namespace of v3's first-party schema classes and their enums.
const NAMESPACE: &str = "io.github.hatayama.UnityCliLoop.FirstPartyTools";

/// The 14 first-party tools, in the order of their folders.
pub const TOOLS: [&str; 14] = [
    "clear-console",
    "compile",
    "control-play-mode",
    "execute-dynamic-code",
    "find-game-objects",
    "get-hierarchy",
    "get-logs",
    "record-input",
    "replay-input",
    "run-tests",
    "screenshot",
    "simulate-keyboard",
    "simulate-mouse-input",
    "simulate-mouse-ui",
];

/// The internal bridge commands (`InternalBridgeCommandRouter.cs:14-35`):
/// answered, never listed.
pub const INTERNAL_COMMANDS: &[&str] = ULOOP_3.catalogue.unlisted;

/// A v3 `ToolInfo` from 2.1.1's recorded listing of the same schema.
fn listing(name: &str, recorded: &Value) -> Value {
    let properties: Map<String, Value> = recorded["parameterSchema"]["Properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(param, p)| {
            (
                param.clone(),
                json!({"Type": p["Type"], "Description": format!("Parameter: {param}"),
                       "DefaultValue": p["DefaultValue"], "Enum": p["Enum"]}),
            )
        })
        .collect();
    json!({"name": name, "parameterSchema": {"Properties": properties, "Required": []}, "displayDevelopmentOnly": false})
}

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(|| {
    let recorded: Value =
        serde_json::from_str(TOOL_DETAILS).expect("the recorded tool details are JSON (a test reads them)");
    let listings = recorded["Tools"].as_array().cloned().unwrap_or_default();
    let mut declared = declarations();
    let spec = |name: &'static str, schema: &str, params: Vec<(&'static str, super::CsType)>, body: Body| {
        let internal = INTERNAL_COMMANDS.contains(&name);
        let recorded = listings.iter().find(|t| t["name"] == name).cloned().unwrap_or(Value::Null);
        let properties = &recorded["parameterSchema"]["Properties"];
        let params = params
            .into_iter()
            .map(|(param, ty)| CsParam { name: param, ty, default: properties[param]["DefaultValue"].clone() })
            .collect();
        ToolSpec {
            name,
            description: "",
            params: Vec::new(),
            // An internal command skips the enabled and security checks,
            // as the core skips them for development-only tools.
            dev_only: internal,
            annotations: Default::default(),
            timeout_seconds: 0.0,
            gate: Gate::None,
            body,
            schema: ToolSchema::Uloop(Binding {
                schema_type: format!("{NAMESPACE}.{schema}"),
                namespace: NAMESPACE,
                params,
                // An internal command has no ToolInfo: never listed.
                listing: if internal { Value::Null } else { listing(name, &recorded) },
            }),
        }
    };
    let mut tools = Vec::new();
    for name in TOOLS.iter().chain(INTERNAL_COMMANDS.iter()) {
        let Some(at) = declared.iter().position(|(n, ..)| n == name) else { continue };
        let (name, schema, params, body) = declared.swap_remove(at);
        let body = match name {
            // Same `GetVersionResponse` fields as 2.1.1's tool.
            methods::GET_VERSION => Body::Sync(internal::get_version),
            _ => body,
        };
        tools.push(spec(name, schema, params, body));
    }
    Catalogue::new(tools)
});

/// uLoopMCP 3's catalogue.
pub fn catalogue() -> &'static Catalogue {
    &CATALOGUE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fourteen_tools_and_two_internal_commands_with_v3_listings() {
        let names: Vec<&str> = catalogue().tools().iter().map(|t| t.name).collect();
        let expected: Vec<&str> = TOOLS.iter().chain(INTERNAL_COMMANDS.iter()).copied().collect();
        assert_eq!(names, expected);
        for gone in [methods::PING, methods::SET_CLIENT_NAME, "debug-sleep", "focus-window", "unity-search"] {
            assert!(catalogue().find(gone).is_none(), "{gone}");
        }
        let ToolSchema::Uloop(compile) = &catalogue().find("compile").unwrap().schema else { panic!() };
        assert_eq!(
            compile.listing,
            json!({"name": "compile", "parameterSchema": {"Properties": {
                "ForceRecompile": {"Type": "boolean", "Description": "Parameter: ForceRecompile", "DefaultValue": false, "Enum": null},
                "WaitForDomainReload": {"Type": "boolean", "Description": "Parameter: WaitForDomainReload", "DefaultValue": false, "Enum": null}},
                "Required": []}, "displayDevelopmentOnly": false})
        );
        assert_eq!(compile.schema_type, "io.github.hatayama.UnityCliLoop.FirstPartyTools.CompileSchema");
        for tool in catalogue().tools() {
            let ToolSchema::Uloop(binding) = &tool.schema else { panic!() };
            assert_eq!(binding.listing.is_null(), INTERNAL_COMMANDS.contains(&tool.name), "{}", tool.name);
            assert!(binding.listing.get("description").is_none());
        }
    }
}

//! Internal tools (`displayDevelopmentOnly`): ping, set-client-name,
//! get-tool-details, get-version, debug-sleep.

use editor_link::{
    discovery::{PROTOCOL_VERSION, unity_path},
    version::{Capabilities, Extension, Version},
};
use serde_json::{Map, Value};

use super::{BoxFuture, Outcome, ToolCall, ToolSpec, result};
use crate::{defect::Defect, params::Kind};

/// uLoopMCP's shape: an enum default as the C# enum's integer value.
fn uloop_enum_defaults(tool: &ToolSpec, detail: &mut editor_link::tool_details::ToolDetail) {
    for param in &tool.params {
        let Kind::Enum(values) = &param.kind else { continue };
        let Some(&(_, number)) = values.iter().find(|(name, _)| param.default == *name) else { continue };
        if let Some(property) = detail.parameter_schema.properties.get_mut(param.name) {
            property.default_value = Some(number.into());
        }
    }
}

pub fn ping(call: &ToolCall) -> Outcome {
    let message = call.args.str("Message");
    Outcome::Reply(result([("Message", format!("Unity MCP Bridge received: {message}").into())]))
}

pub fn set_client_name(call: &ToolCall) -> Outcome {
    let name = call.args.str("ClientName");
    call.client.set_name(name);
    Outcome::Reply(result([("Message", format!("Client name set to: {name}").into()), ("ClientName", name.into())]))
}

/// The package's output schemas, as its C# generates them from its response
/// types (checked there against what it generates).
fn package_output_schemas() -> &'static Map<String, Value> {
    static SCHEMAS: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    SCHEMAS.get_or_init(|| {
        serde_json::from_str(include_str!("../../../fixtures/editor-models/package.output-schemas.json"))
            .unwrap_or_default()
    })
}

pub fn get_tool_details(call: &ToolCall) -> Outcome {
    let include_dev = call.args.bool("IncludeDevelopmentOnly") || call.editor.has_defect(Defect::ListsInternalTools);
    let extensions = call.editor.model.extensions;
    let types_as_strings = call.editor.has_defect(Defect::SchemaTypesAsStrings);
    let tools: Vec<Value> = super::offered(&call.editor, include_dev)
        .into_iter()
        .map(|t| {
            let mut detail = t.detail();
            if !extensions.enum_default_names {
                uloop_enum_defaults(t, &mut detail);
            }
            if call.editor.model.messages.timeout_parameter == crate::editor::model::messages::TimeoutParameter::Refused
            {
                detail.parameter_schema.properties.shift_remove("TimeoutSeconds");
            }
            if !extensions.tool_metadata {
                detail.annotations = None;
                detail.timeout_seconds = None;
            }
            if call.editor.has_defect(Defect::EnumDefaultsOutsideEnum) {
                for property in detail.parameter_schema.properties.values_mut() {
                    if let (Some(_), Some(Value::String(name))) = (&property.enum_values, &mut property.default_value) {
                        *name = name.to_lowercase();
                    }
                }
            }
            if call.editor.has_defect(Defect::RewordedDescriptions) {
                detail.description = format!("Reworded: {}", detail.description);
            }
            if types_as_strings {
                for property in detail.parameter_schema.properties.values_mut() {
                    property.ty = editor_link::tool_details::ParameterType::String;
                }
            }
            if extensions.output_schema {
                if let Some(schema) = package_output_schemas().get(t.name) {
                    detail.extra.insert("outputSchema".into(), schema.clone());
                }
            }
            serde_json::to_value(detail).unwrap_or(Value::Null)
        })
        .collect();
    Outcome::Reply(result([("Tools", tools.into())]))
}

pub fn get_version(call: &ToolCall) -> Outcome {
    let editor = &call.editor;
    let info = &editor.base.editor;
    let extensions = &editor.model.extensions;
    // In the package's order (no dialog-buttons: the fake shows no dialog
    // a client could press).
    let offered = [
        (Extension::Resume, extensions.resume),
        (Extension::Progress, true),
        (Extension::NewlineFraming, true),
        (Extension::ImageData, true),
        (Extension::OutputSchema, extensions.output_schema),
        (Extension::EditorState, extensions.editor_state),
        (Extension::Token, editor.token_enforced()),
    ];
    let capabilities = Capabilities::of(offered.into_iter().filter(|(_, on)| *on).map(|(extension, _)| extension));
    let mut version = Version {
        unity_version: Some(info.unity_version.clone()),
        platform: Some(info.platform.clone()),
        data_path: Some(unity_path(&editor.project.join("Assets"))),
        product_name: Some(info.product_name.clone()),
        package_version: Some(info.package_version.clone()),
        protocol_version: Some(PROTOCOL_VERSION),
        // The Editor process (the same across reloads): the resume journal
        // belongs to it, so a client resumes only where this has not changed.
        editor_instance_id: Some(editor.instance_id()),
        capabilities: Some(capabilities),
        ver: None,
    };
    if !extensions.capabilities {
        version = Version { protocol_version: None, editor_instance_id: None, capabilities: None, ..version };
    }
    Outcome::Reply(version.to_result())
}

pub fn debug_sleep(call: ToolCall) -> BoxFuture {
    Box::pin(async move {
        let seconds = call.args.float("SleepSeconds");
        tokio::time::sleep(editor_link::duration::saturating_seconds(seconds)).await;
        Outcome::Reply(result([
            ("Message", format!("Successfully slept for {seconds} seconds").into()),
            ("ActualSleepSeconds", call.args.get("SleepSeconds").clone()),
            ("WasCancelled", false.into()),
        ]))
    })
}

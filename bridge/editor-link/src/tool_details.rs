//! The `get-tool-details` result (protocol §6): the Editor's tools and their
//! parameter schemas, in the order the Editor sends them.

use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The whole `get-tool-details` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolDetails {
    #[serde(rename = "Tools")]
    pub tools: Vec<ToolDetail>,
    #[serde(rename = "Ver", default, skip_serializing_if = "Option::is_none")]
    pub ver: Option<String>,
}

/// One tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDetail {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub parameter_schema: ParameterSchema,
    #[serde(default)]
    pub display_development_only: bool,
    /// Extension: MCP's behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Extension: a sensible default deadline for the tool, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<f64>,
    /// Members this version does not know, kept so nothing is lost in transit.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool's parameters. `properties` keeps the Editor's order, which is
/// meaningful (it is the C# declaration order).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ParameterSchema {
    #[serde(rename = "Properties", default)]
    pub properties: IndexMap<String, ParameterProperty>,
    #[serde(rename = "Required", default)]
    pub required: Vec<String>,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParameterProperty {
    #[serde(rename = "Type")]
    pub ty: ParameterType,
    #[serde(rename = "Description", default)]
    pub description: String,
    /// uLoopMCP sends enum defaults as integers (the C# enum value); ours send
    /// the name. `None` is sent as `null`.
    #[serde(rename = "DefaultValue", default)]
    pub default_value: Option<Value>,
    /// Allowed names for enum parameters; `null` otherwise.
    #[serde(rename = "Enum", default)]
    pub enum_values: Option<Vec<String>>,
}

/// MCP's tool annotations, with MCP's names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// The `Type` of a parameter. Types outside the protocol's five are kept
/// verbatim, so a newer Editor's tool list still parses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParameterType {
    String,
    Boolean,
    Number,
    Array,
    Object,
    Other(String),
}

impl ParameterType {
    pub fn as_str(&self) -> &str {
        match self {
            ParameterType::String => "string",
            ParameterType::Boolean => "boolean",
            ParameterType::Number => "number",
            ParameterType::Array => "array",
            ParameterType::Object => "object",
            ParameterType::Other(other) => other,
        }
    }
}

impl From<&str> for ParameterType {
    fn from(s: &str) -> Self {
        match s {
            "string" => ParameterType::String,
            "boolean" => ParameterType::Boolean,
            "number" => ParameterType::Number,
            "array" => ParameterType::Array,
            "object" => ParameterType::Object,
            other => ParameterType::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ParameterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ParameterType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ParameterType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(ParameterType::from(s.as_str()))
    }
}

impl ToolDetails {
    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolDetail> {
        self.tools.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of protocol §6, verbatim.
    const EXAMPLE: &str = r#"{"Tools":[{"name":"get-logs","description":"Retrieves log information from the Unity console with filtering and search","parameterSchema":{"Properties":{"LogType":{"Type":"string","Description":"Log type to filter","DefaultValue":"All","Enum":["Error","Warning","Log","All"]},"MaxCount":{"Type":"number","Description":"Maximum number of logs to retrieve","DefaultValue":100,"Enum":null}},"Required":[]},"displayDevelopmentOnly":false}],"Ver":"1.0.0"}"#;

    #[test]
    fn example_round_trips_byte_for_byte() {
        let details: ToolDetails = serde_json::from_str(EXAMPLE).unwrap();
        let tool = details.get("get-logs").unwrap();
        let names: Vec<_> = tool.parameter_schema.properties.keys().collect();
        assert_eq!(names, ["LogType", "MaxCount"]);
        assert_eq!(tool.parameter_schema.properties["LogType"].ty, ParameterType::String);
        assert_eq!(serde_json::to_string(&details).unwrap(), EXAMPLE);
    }

    #[test]
    fn order_is_kept_and_unknown_members_survive() {
        let text = r#"{"Tools":[{"name":"t","description":"","parameterSchema":{"Properties":{"Zeta":{"Type":"vector3","Description":"","DefaultValue":null,"Enum":null},"Alpha":{"Type":"number","Description":"","DefaultValue":1,"Enum":null}},"Required":[]},"displayDevelopmentOnly":true,"annotations":{"readOnlyHint":true},"timeoutSeconds":30.0,"x-new":[1]}]}"#;
        let details: ToolDetails = serde_json::from_str(text).unwrap();
        let tool = &details.tools[0];
        assert_eq!(tool.parameter_schema.properties.keys().collect::<Vec<_>>(), ["Zeta", "Alpha"]);
        assert_eq!(tool.parameter_schema.properties["Zeta"].ty, ParameterType::Other("vector3".into()));
        assert_eq!(tool.annotations.as_ref().unwrap().read_only_hint, Some(true));
        assert_eq!(tool.extra["x-new"], serde_json::json!([1]));
        assert_eq!(serde_json::to_string(&details).unwrap(), text);
    }
}

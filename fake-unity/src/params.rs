//! Schema-driven tool parameters: each tool declares its parameters once
//! ([`Param`]); the same declaration produces the `parameterSchema` of
//! `get-tool-details` and validates incoming params into [`Args`].
//!
//! Matching follows Newtonsoft as uLoopMCP uses it: parameter names are
//! matched case-insensitively, unknown names are ignored, `null` means the
//! default, enum values are accepted by name (any case) or by C# value.

use editor_link::{
    jsonrpc::{ErrorKind, ErrorObject, json_type},
    tool_details::{ParameterProperty, ParameterSchema, ParameterType},
};
use indexmap::IndexMap;
use serde_json::{Map, Value};

/// What values a parameter takes.
#[derive(Clone, Debug)]
pub enum Kind {
    Str,
    Bool,
    /// An integer (a JSON number with no fractional part) within bounds.
    Int {
        min: i64,
        max: i64,
    },
    /// Any number within bounds.
    Float {
        min: f64,
        max: f64,
    },
    /// A C# enum: names with their values.
    Enum(&'static [(&'static str, i64)]),
    StrArray,
    Object,
}

/// One declared parameter.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub description: &'static str,
    /// The default; `Value::Null` for "none" (e.g. `Layer`).
    pub default: Value,
}

impl Param {
    pub fn new(name: &'static str, kind: Kind, default: impl Into<Value>, description: &'static str) -> Param {
        Param { name, kind, description, default: default.into() }
    }

    fn property(&self) -> ParameterProperty {
        let (ty, enum_values) = match &self.kind {
            Kind::Str => (ParameterType::String, None),
            Kind::Bool => (ParameterType::Boolean, None),
            Kind::Int { .. } | Kind::Float { .. } => (ParameterType::Number, None),
            Kind::Enum(values) => {
                (ParameterType::String, Some(values.iter().map(|(name, _)| (*name).to_owned()).collect()))
            }
            Kind::StrArray => (ParameterType::Array, None),
            Kind::Object => (ParameterType::Object, None),
        };
        ParameterProperty {
            ty,
            description: self.description.to_owned(),
            default_value: (!self.default.is_null()).then(|| self.default.clone()),
            enum_values,
        }
    }

    /// Checks and normalises one supplied value.
    fn check(&self, value: &Value) -> Result<Value, String> {
        let wrong_type = |expected: &str| format!("must be {expected}, not {}", describe(value));
        match &self.kind {
            Kind::Str => value.as_str().map(Value::from).ok_or_else(|| wrong_type("a string")),
            Kind::Bool => value.as_bool().map(Value::from).ok_or_else(|| wrong_type("a boolean")),
            Kind::Int { min, max } => {
                let n = value.as_f64().ok_or_else(|| wrong_type("a number"))?;
                if n.fract() != 0.0 {
                    return Err(format!("must be a whole number, not {n}"));
                }
                if n < *min as f64 || n > *max as f64 {
                    return Err(format!("must be between {min} and {max}, not {n}"));
                }
                Ok(Value::from(n as i64))
            }
            Kind::Float { min, max } => {
                let n = value.as_f64().ok_or_else(|| wrong_type("a number"))?;
                if !(n >= *min && n <= *max) {
                    return Err(format!("must be between {min} and {max}, not {n}"));
                }
                // Keep 2 as 2 and 2.5 as 2.5, as they were sent.
                Ok(value.clone())
            }
            Kind::Enum(values) => {
                let names = || values.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
                let found = match value {
                    Value::String(s) => values.iter().find(|(name, _)| name.eq_ignore_ascii_case(s)),
                    Value::Number(n) => n.as_i64().and_then(|n| values.iter().find(|(_, v)| *v == n)),
                    _ => return Err(format!("must be one of {}, not {}", names(), describe(value))),
                };
                found
                    .map(|(name, _)| Value::from(*name))
                    .ok_or_else(|| format!("must be one of {}, not {value}", names()))
            }
            Kind::StrArray => match value {
                Value::Array(items) if items.iter().all(Value::is_string) => Ok(value.clone()),
                Value::Array(_) => Err("must be an array of strings".into()),
                _ => Err(wrong_type("an array of strings")),
            },
            Kind::Object => match value {
                Value::Object(_) => Ok(value.clone()),
                _ => Err(wrong_type("an object")),
            },
        }
    }
}

/// The `parameterSchema` of a tool, in declaration order.
pub fn schema(params: &[Param]) -> ParameterSchema {
    ParameterSchema {
        properties: params.iter().map(|p| (p.name.to_owned(), p.property())).collect(),
        required: Vec::new(),
    }
}

/// Validated arguments: every declared parameter, defaults filled in.
#[derive(Clone, Debug, Default)]
pub struct Args {
    values: IndexMap<&'static str, Value>,
}

impl Args {
    /// Validates `supplied` against `params`. The error names the parameter.
    pub fn parse(params: &[Param], supplied: &Map<String, Value>) -> Result<Args, ErrorObject> {
        let mut values: IndexMap<&'static str, Value> = params.iter().map(|p| (p.name, p.default.clone())).collect();
        for (key, value) in supplied {
            let Some(param) = params.iter().find(|p| p.name.eq_ignore_ascii_case(key)) else {
                continue;
            };
            if value.is_null() {
                continue;
            }
            let checked = param.check(value).map_err(|why| {
                ErrorObject::new(ErrorKind::InvalidParams, format!("Parameter '{}' {why}", param.name))
                    .with_data("parameter", param.name)
            })?;
            values.insert(param.name, checked);
        }
        Ok(Args { values })
    }

    /// Arguments read by another binder (uLoopMCP's Newtonsoft reading).
    pub fn from_values(values: IndexMap<&'static str, Value>) -> Args {
        Args { values }
    }

    /// The normalised value of a parameter, as JSON.
    pub fn get(&self, name: &str) -> &Value {
        self.values.get(name).unwrap_or(&Value::Null)
    }

    pub fn str(&self, name: &str) -> &str {
        self.get(name).as_str().unwrap_or("")
    }

    /// A string parameter whose default is `null`: `None` when absent or empty.
    pub fn non_empty_str(&self, name: &str) -> Option<&str> {
        self.get(name).as_str().filter(|s| !s.is_empty())
    }

    pub fn bool(&self, name: &str) -> bool {
        self.get(name).as_bool().unwrap_or(false)
    }

    pub fn int(&self, name: &str) -> i64 {
        self.get(name).as_i64().unwrap_or(0)
    }

    /// An integer parameter whose default is `null`.
    pub fn opt_int(&self, name: &str) -> Option<i64> {
        self.get(name).as_i64()
    }

    pub fn float(&self, name: &str) -> f64 {
        self.get(name).as_f64().unwrap_or(0.0)
    }

    pub fn str_list(&self, name: &str) -> Vec<String> {
        match self.get(name) {
            Value::Array(items) => items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        }
    }

    pub fn object(&self, name: &str) -> Map<String, Value> {
        self.get(name).as_object().cloned().unwrap_or_default()
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::String(s) => format!("string {s:?}"),
        Value::Number(n) => format!("number {n}"),
        Value::Bool(b) => format!("boolean {b}"),
        other => json_type(other).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LOG_TYPES: &[(&str, i64)] = &[("Error", 0), ("Warning", 1), ("Log", 2), ("All", 3)];

    fn params() -> Vec<Param> {
        vec![
            Param::new("LogType", Kind::Enum(LOG_TYPES), "All", "Log type to filter"),
            Param::new("MaxCount", Kind::Int { min: 0, max: 100_000 }, 100, "Maximum number of logs"),
            Param::new("Layer", Kind::Int { min: 0, max: 31 }, Value::Null, "Layer filter"),
            Param::new("Names", Kind::StrArray, json!([]), "Names"),
        ]
    }

    #[test]
    fn defaults_fill_in_and_names_match_any_case() {
        let args = Args::parse(&params(), json!({"logtype": "error", "maxCount": 5.0}).as_object().unwrap()).unwrap();
        assert_eq!(args.str("LogType"), "Error");
        assert_eq!(args.int("MaxCount"), 5);
        assert_eq!(args.opt_int("Layer"), None);
        assert!(args.str_list("Names").is_empty());
        let args =
            Args::parse(&params(), json!({"LogType": 1, "Layer": null, "Unknown": 1}).as_object().unwrap()).unwrap();
        assert_eq!(args.str("LogType"), "Warning");
    }

    #[test]
    fn errors_name_the_parameter() {
        for (input, param, fragment) in [
            (json!({"MaxCount": "5"}), "MaxCount", "must be a number, not string \"5\""),
            (json!({"MaxCount": 2.5}), "MaxCount", "whole number"),
            (json!({"MaxCount": -1}), "MaxCount", "between 0 and 100000"),
            (json!({"LogType": "Bogus"}), "LogType", "must be one of Error, Warning, Log, All"),
            (json!({"LogType": 9}), "LogType", "must be one of"),
            (json!({"Names": "a"}), "Names", "array of strings"),
            (json!({"Names": [1]}), "Names", "array of strings"),
        ] {
            let err = Args::parse(&params(), input.as_object().unwrap()).unwrap_err();
            assert_eq!(err.code, -32602);
            assert_eq!(err.data.as_ref().unwrap()["parameter"], param);
            assert!(err.detail().contains(fragment), "{}", err.detail());
        }
    }

    #[test]
    fn schema_keeps_order_enums_and_null_defaults() {
        let schema = schema(&params());
        assert_eq!(schema.properties.keys().collect::<Vec<_>>(), ["LogType", "MaxCount", "Layer", "Names"]);
        let log_type = &schema.properties["LogType"];
        assert_eq!(log_type.default_value, Some(json!("All")));
        assert_eq!(log_type.enum_values.as_ref().unwrap(), &["Error", "Warning", "Log", "All"]);
        assert_eq!(schema.properties["Layer"].default_value, None);
        assert_eq!(schema.properties["Names"].ty, ParameterType::Array);
    }
}

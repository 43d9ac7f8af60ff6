//! Parameters read as uLoopMCP 2.1.1 reads them: `params.ToObject<TSchema>()`
//! with Newtonsoft (`AbstractUnityTool.ConvertToSchema`). Names match in any
//! case, unknown names are ignored, the last of two equal names wins; values
//! convert as Newtonsoft 6.0.8 converts them (the library of the recordings:
//! an int takes `2.5` as 2 and `"12"` as 12, a string takes `1.5` as
//! `"1.5"`, an enum takes a name in any case or any integer). A value that
//! does not convert is refused in one of uLoopMCP's two error shapes, with
//! Newtonsoft's text: its reader errors escape as they are (`"Internal
//! error"`, the text in `data.message`); its serialization errors become
//! "Parameter type mismatch for tool '…'" (the text in `message`).
//!
//! Newtonsoft names a position, `line 1, position N`: the characters read
//! when the value ended, counted here over the request as a compact JSON
//! object with the usual member order (jsonrpc, id, method, params) — the
//! real server counts over the bytes it received.

use editor_link::jsonrpc::ErrorObject;
use indexmap::IndexMap;
use serde_json::Value;

use super::{Binding, CsType};
use crate::{
    editor::model::errors::{uloop_internal, uloop_validation},
    params::Args,
};

/// Where the request's text stands: the characters before `params`' value.
#[derive(Clone, Copy, Debug)]
pub struct RequestText {
    /// Characters up to and including `"params":`.
    pub params_start: usize,
}

impl RequestText {
    /// The compact text `{"jsonrpc":"2.0","id":ID,"method":METHOD,"params":`.
    pub fn of(id: &Value, method: &str) -> RequestText {
        let prefix =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":{},\"params\":", id, Value::String(method.to_owned()));
        RequestText { params_start: prefix.chars().count() }
    }
}

fn chars(value: &Value) -> usize {
    value.to_string().chars().count()
}

/// Reads `params` into the tool's arguments, defaults filled in.
pub fn bind(tool: &str, binding: &Binding, params: Option<&Value>, text: RequestText) -> Result<Args, ErrorObject> {
    let mut values: IndexMap<&'static str, Value> =
        binding.params.iter().map(|p| (p.name, p.default.clone())).collect();
    let object = match params {
        None | Some(Value::Null) => return Ok(Args::from_values(values)),
        Some(Value::Object(object)) => object,
        Some(Value::Array(_)) => {
            return Err(uloop_validation(format!(
                "Parameter type mismatch for tool '{tool}': Cannot deserialize the current JSON array (e.g. [1,2,3]) into type '{}' because the type requires a JSON object (e.g. {{\"name\":\"value\"}}) to deserialize correctly.\nTo fix this error either change the JSON to a JSON object (e.g. {{\"name\":\"value\"}}) or change the deserialized type to an array or a type that implements a collection interface (e.g. ICollection, IList) like List<T> that can be deserialized from a JSON array. JsonArrayAttribute can also be added to the type to force it to deserialize from a JSON array.\nPath '', line 1, position {}.",
                binding.schema_type,
                text.params_start + 1
            )));
        }
        Some(other) => {
            return Err(uloop_validation(format!(
                "Parameter type mismatch for tool '{tool}': Error converting value {} to type '{}'. Path '', line 1, position {}.",
                shown(other),
                binding.schema_type,
                text.params_start + chars(other)
            )));
        }
    };
    // Characters read before each member's value, in order.
    let mut position = text.params_start + 1;
    for (index, (key, value)) in object.iter().enumerate() {
        if index > 0 {
            position += 1; // ,
        }
        position += chars(&Value::String(key.clone())) + 1;
        let end = position + chars(value);
        let at = Where { key, end };
        position = end;
        let Some(param) = binding.params.iter().find(|p| p.name.eq_ignore_ascii_case(key)) else { continue };
        let converted =
            convert(&param.ty, value, &at, binding.namespace).map_err(|failure| failure.into_error(tool))?;
        values.insert(param.name, converted);
    }
    Ok(Args::from_values(values))
}

/// The member being read, for Newtonsoft's `Path '…', line 1, position N`.
struct Where<'a> {
    key: &'a str,
    end: usize,
}

impl Where<'_> {
    fn path(&self) -> String {
        format!("Path '{}', line 1, position {}.", self.key, self.end)
    }
}

/// How a value failed to convert.
enum Refused {
    /// A `JsonReaderException`: escapes as it is (the first shape).
    Reader(String),
    /// A `JsonSerializationException`: "Parameter type mismatch" (the second shape).
    Serialization(String),
}

impl Refused {
    fn into_error(self, tool: &str) -> ErrorObject {
        match self {
            Refused::Reader(text) => uloop_internal(text),
            Refused::Serialization(text) => {
                uloop_validation(format!("Parameter type mismatch for tool '{tool}': {text}"))
            }
        }
    }
}

/// A value as Newtonsoft's "Error converting value …" shows it.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "{null}".into(),
        Value::String(s) => format!("\"{s}\""),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

fn converting(value: &Value, type_name: &str, at: &Where<'_>) -> Refused {
    Refused::Serialization(format!("Error converting value {} to type '{type_name}'. {}", shown(value), at.path()))
}

fn token(value: &Value) -> &'static str {
    match value {
        Value::Null => "Null",
        Value::Bool(_) => "Boolean",
        Value::Number(n) if n.is_f64() => "Float",
        Value::Number(_) => "Integer",
        Value::String(_) => "String",
        Value::Array(_) => "StartArray",
        Value::Object(_) => "StartObject",
    }
}

/// Banker's rounding of a float to an int, as `Convert.ToInt32` does.
fn round_half_even(n: f64) -> f64 {
    let rounded = n.round();
    if (n - n.trunc()).abs() == 0.5 && rounded % 2.0 != 0.0 { rounded - n.signum() } else { rounded }
}

fn convert(ty: &CsType, value: &Value, at: &Where<'_>, namespace: &str) -> Result<Value, Refused> {
    match ty {
        CsType::Str => match value {
            Value::Null | Value::String(_) => Ok(value.clone()),
            Value::Bool(b) => Ok(Value::String(if *b { "True" } else { "False" }.into())),
            Value::Number(n) => Ok(Value::String(n.to_string())),
            other => {
                Err(Refused::Reader(format!("Error reading string. Unexpected token: {}. {}", token(other), at.path())))
            }
        },
        CsType::Bool => match value {
            Value::Bool(_) => Ok(value.clone()),
            Value::Number(n) => Ok(Value::Bool(n.as_f64().is_some_and(|n| n != 0.0))),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
            other => Err(converting(other, "System.Boolean", at)),
        },
        CsType::Int => {
            let n = match value {
                Value::Number(n) => n.as_f64().unwrap_or(0.0),
                Value::String(s) => match s.trim().parse::<i64>() {
                    Ok(n) => n as f64,
                    Err(_) => {
                        return Err(Refused::Reader(format!(
                            "Could not convert string to integer: {s}. {}",
                            at.path()
                        )));
                    }
                },
                Value::Null => return Err(converting(value, "System.Int32", at)),
                other => {
                    return Err(Refused::Reader(format!(
                        "Error reading integer. Unexpected token: {}. {}",
                        token(other),
                        at.path()
                    )));
                }
            };
            let n = round_half_even(n);
            if n < f64::from(i32::MIN) || n > f64::from(i32::MAX) {
                return Err(Refused::Reader("Value was either too large or too small for an Int32.".into()));
            }
            Ok(Value::from(n as i64))
        }
        CsType::Float => match value {
            Value::Number(_) => Ok(value.clone()),
            Value::Bool(b) => Ok(Value::from(if *b { 1.0 } else { 0.0 })),
            Value::String(s) => {
                s.trim().parse::<f64>().map(Value::from).map_err(|_| converting(value, "System.Single", at))
            }
            other => Err(converting(other, "System.Single", at)),
        },
        CsType::Enum { type_name, values } => {
            let found = match value {
                Value::String(s) => match s.trim().parse::<i64>() {
                    Ok(n) => Some(n),
                    Err(_) => values.iter().find(|(name, _)| name.eq_ignore_ascii_case(s.trim())).map(|(_, v)| *v),
                },
                Value::Number(n) => n.as_i64(),
                Value::Bool(b) => Some(i64::from(*b)),
                _ => None,
            };
            found.map(Value::from).ok_or_else(|| converting(value, &format!("{namespace}.{type_name}"), at))
        }
        CsType::StrArray => match value {
            Value::Null => Ok(Value::Null),
            Value::Array(items) => Ok(Value::Array(
                items
                    .iter()
                    .map(|item| match item {
                        Value::String(_) | Value::Null => item.clone(),
                        Value::Bool(b) => Value::String(if *b { "True" } else { "False" }.into()),
                        other => Value::String(other.to_string()),
                    })
                    .collect(),
            )),
            other => Err(converting(other, "System.String[]", at)),
        },
        CsType::Dict => match value {
            Value::Null | Value::Object(_) => Ok(value.clone()),
            Value::String(s) => Err(Refused::Serialization(format!(
                "Parameter 'Parameters' must be an object, not a string. Do: omit 'Parameters' or use {{}}. Don't: \"{{}}\" (string). Received: {s}"
            ))),
            other => Err(converting(other, "System.Collections.Generic.Dictionary`2[System.String,System.Object]", at)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn get_logs() -> &'static Binding {
        match &super::super::catalogue().find("get-logs").unwrap().schema {
            crate::tools::ToolSchema::Uloop(binding) => binding,
            crate::tools::ToolSchema::Declared => unreachable!(),
        }
    }

    #[test]
    fn values_convert_as_newtonsoft_6_converts_them() {
        let text = RequestText::of(&json!("r"), "get-logs");
        let args =
            bind("get-logs", get_logs(), Some(&json!({"maxcount": 2.5, "LogType": 5, "UseRegex": "True"})), text)
                .unwrap();
        assert_eq!((args.int("MaxCount"), args.str("LogType"), args.bool("UseRegex")), (2, "5", true));
        assert_eq!(bind("get-logs", get_logs(), None, text).unwrap().int("MaxCount"), 100);
    }

    #[test]
    fn refusals_are_in_the_recorded_shapes() {
        // ts-server-session.jsonl (sent compact, so its positions are
        // Newtonsoft's own) and raw-requests.jsonl a1.
        let text = RequestText::of(&json!("ts_1795528426090_12632_708_0015"), "get-logs");
        let error = bind("get-logs", get_logs(), Some(&json!({"MaxCount": "ten"})), text).unwrap_err();
        assert_eq!(error.message, "Internal error");
        assert_eq!(
            error.data.unwrap()["message"],
            "Could not convert string to integer: ten. Path 'MaxCount', line 1, position 102."
        );
        let text = RequestText::of(&json!("a1"), "get-logs");
        let error = bind("get-logs", get_logs(), Some(&json!([1, 2])), text).unwrap_err();
        assert!(
            error
                .message
                .starts_with("Parameter type mismatch for tool 'get-logs': Cannot deserialize the current JSON array")
        );
        assert!(error.message.ends_with("Path '', line 1, position 57."), "{}", error.message);
        assert_eq!(error.data.unwrap()["message"], "");
    }
}

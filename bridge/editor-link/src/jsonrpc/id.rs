//! Request ids: a string or a number, echoed with the same JSON type and
//! value, a number exactly as it was written.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json_type;

/// A request id: a string or a number, echoed with the same JSON type and value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Id {
    /// A number, exactly as it was written.
    Number(IdNumber),
    String(String),
    /// Any other JSON value (a boolean, an array, an object) as its compact
    /// text. Only [`Message::parse_lenient`] makes one: uLoopMCP's Editor
    /// runs such a request and echoes its id; the protocol refuses it.
    Other(String),
}

/// A numeric id as its JSON text (`7`, `-0`, `1.5`,
/// `123456789012345678901234567890`): echoed byte for byte, since a number
/// read into a float would come back as `-0.0` or `1.2345678901234568e29`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdNumber(String);

impl IdNumber {
    /// The JSON text of a number, if `text` is one.
    pub fn parse(text: &str) -> Option<IdNumber> {
        let text = text.trim();
        serde_json::from_str::<serde_json::Number>(text).ok().map(|_| IdNumber(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as a JSON value (a float when it is not an integer that
    /// fits 64 bits: only for display, never to echo).
    pub fn to_number(&self) -> serde_json::Number {
        serde_json::from_str(&self.0).unwrap_or_else(|_| serde_json::Number::from(0))
    }
}

impl From<&serde_json::Number> for IdNumber {
    fn from(n: &serde_json::Number) -> Self {
        IdNumber(n.to_string())
    }
}

impl Id {
    /// The id as a JSON value (exact for strings and 64-bit integers).
    pub fn to_value(&self) -> Value {
        match self {
            Id::Number(n) => Value::Number(n.to_number()),
            Id::String(s) => Value::String(s.clone()),
            Id::Other(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        }
    }

    /// An id from a JSON value: `Ok(None)` for `null`, an error for other types.
    pub fn from_value(value: &Value) -> Result<Option<Id>, String> {
        match value {
            Value::Null => Ok(None),
            Value::Number(n) => Ok(Some(Id::Number(n.into()))),
            Value::String(s) => Ok(Some(Id::String(s.clone()))),
            other => Err(format!("id must be a string or a number, not {}", json_type(other))),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::String(s) => serializer.serialize_str(s),
            Id::Other(text) => serde_json::value::RawValue::from_string(text.clone())
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
            Id::Number(n) => serde_json::value::RawValue::from_string(n.0.clone())
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match Id::from_value(&value) {
            Ok(Some(id)) => Ok(id),
            Ok(None) => Err(serde::de::Error::custom("an id cannot be null")),
            Err(why) => Err(serde::de::Error::custom(why)),
        }
    }
}

impl From<u64> for Id {
    fn from(n: u64) -> Self {
        Id::Number(IdNumber(n.to_string()))
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(IdNumber(n.to_string()))
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::String(s)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => f.write_str(n.as_str()),
            Id::String(s) => write!(f, "{s:?}"),
            Id::Other(text) => f.write_str(text),
        }
    }
}

//! Tools' `outputSchema`s: what a tool's `structuredContent` looks like, so
//! that a client can know its shape. A wrong schema is worse than none
//! (strict clients reject a result that does not validate), so a schema
//! promises only what every answer holds:
//!
//! - an Editor that declares schemas (the package's `outputSchema` in
//!   `get-tool-details`, generated from its response types) is taken at
//!   its word;
//! - uLoopMCP 2.1.1 declares none: its schemas are inferred from the real
//!   server's recorded answers (`fixtures/recordings/uloop-2.1.1/`, into
//!   `fixtures/editor-models/uloop-2.1.1.output-schemas.json`, checked by a
//!   test against the recordings) and only tools with recorded answers get
//!   one.
//!
//! Inferred schemas are open (`additionalProperties` is never false) and
//! require only top-level numbers and booleans present in every answer, and
//! `Ver`: an oversized result is saved to a file and its
//! `structuredContent` keeps only the top-level numbers, booleans and short
//! strings ([`crate::results`]), which must still validate.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

/// The schemas of uLoopMCP 2.1.1's tools, by tool.
const ULOOP_2_1_1: &str = include_str!("../../fixtures/editor-models/uloop-2.1.1.output-schemas.json");

/// uLoopMCP 2.1.1's schemas (its `get-tool-details` says `Ver: "2.1.1"`).
pub fn uloop_2_1_1() -> &'static Map<String, Value> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| serde_json::from_str(ULOOP_2_1_1).unwrap_or_default())
}

/// The schema of answers like `samples` (results of one tool): `None`
/// without a sample, or when one is not an object.
pub fn infer(samples: &[&Value]) -> Option<Value> {
    if samples.is_empty() || !samples.iter().all(|s| s.is_object()) {
        return None;
    }
    let mut schema = shape(samples);
    // A result is an object, never null.
    schema["type"] = "object".into();
    // Required: what every answer has and the summary of a saved result
    // keeps — numbers and booleans (a string may be long or null, and then
    // the summary drops it), and `Ver`, which every result carries (§6).
    let kept =
        |key: &str, value: &Value| value.is_number() || value.is_boolean() || (key == "Ver" && value.is_string());
    let required: Vec<String> = samples[0]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, _)| samples.iter().all(|s| s.get(key.as_str()).is_some_and(|v| kept(key, v))))
        .map(|(key, _)| key.clone())
        .collect();
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    Some(schema)
}

/// The schema of values like `samples`, nothing required below the top.
fn shape(samples: &[&Value]) -> Value {
    let mut types: Vec<&str> = Vec::new();
    for sample in samples {
        let ty = match sample {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    // An integer seen beside a number is a number.
    if types.contains(&"number") {
        types.retain(|t| *t != "integer");
    }
    // The Editor's answers are C# objects: a string, an array or an object
    // (a reference type) may be null in any answer, though none was seen.
    if types.iter().any(|t| matches!(*t, "string" | "array" | "object")) && !types.contains(&"null") {
        types.push("null");
    }
    types.sort_unstable();
    let mut schema = match types.as_slice() {
        [one] => json!({"type": one}),
        many => json!({"type": many}),
    };
    if types.contains(&"object") {
        let objects: Vec<&Map<String, Value>> = samples.iter().filter_map(|s| s.as_object()).collect();
        let mut keys: Vec<&String> = objects.iter().flat_map(|o| o.keys()).collect();
        keys.sort();
        keys.dedup();
        let properties: Map<String, Value> = keys
            .into_iter()
            .map(|key| {
                let values: Vec<&Value> = objects.iter().filter_map(|o| o.get(key)).collect();
                (key.clone(), shape(&values))
            })
            .collect();
        schema["properties"] = Value::Object(properties);
    }
    if types.contains(&"array") {
        let items: Vec<&Value> = samples.iter().filter_map(|s| s.as_array()).flatten().collect();
        // No element seen: any element.
        schema["items"] = if items.is_empty() { json!({}) } else { shape(&items) };
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed 2.1.1 schemas are those its recordings show; with
    /// `UPDATE_OUTPUT_SCHEMAS=1` the test writes them.
    #[test]
    fn the_uloop_2_1_1_schemas_are_inferred_from_its_recorded_answers() {
        use std::collections::BTreeMap;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut answers: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for name in ["raw-requests", "ts-server-session"] {
            let path = root.join(format!("fixtures/recordings/uloop-2.1.1/{name}.jsonl"));
            let mut asked: std::collections::HashMap<(u64, String), String> = Default::default();
            for line in std::fs::read_to_string(&path).unwrap().lines().skip(1) {
                let event: Value = serde_json::from_str(line).unwrap();
                let (Some(connection), Some(message)) = (event["conn"].as_u64(), event.get("message")) else {
                    continue;
                };
                let id = (connection, message["id"].to_string());
                match (message["method"].as_str(), message.get("result")) {
                    (Some(method), _) if message.get("id").is_some() => drop(asked.insert(id, method.to_owned())),
                    (None, Some(result)) => {
                        if let Some(method) = asked.get(&id) {
                            answers.entry(method.clone()).or_default().push(result.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut schemas = Map::new();
        for (tool, results) in &answers {
            let samples: Vec<&Value> = results.iter().collect();
            if let Some(schema) = infer(&samples) {
                schemas.insert(tool.clone(), schema);
            }
        }
        let text = format!("{:#}\n", Value::Object(schemas.clone()));
        let file = root.join("fixtures/editor-models/uloop-2.1.1.output-schemas.json");
        if std::env::var_os("UPDATE_OUTPUT_SCHEMAS").is_some() {
            std::fs::write(&file, &text).unwrap();
        }
        assert_eq!(
            uloop_2_1_1(),
            &schemas,
            "{} is not what the recordings show: run UPDATE_OUTPUT_SCHEMAS=1 cargo test -p unity-mcp-bridge --lib output_schemas",
            file.display()
        );
        for tool in ["get-logs", "clear-console", "control-play-mode", "focus-window"] {
            assert!(schemas.contains_key(tool), "{tool} was answered in the recordings");
        }
    }

    #[test]
    fn a_schema_promises_only_what_every_answer_holds() {
        let a =
            json!({"Success": true, "Count": 3, "Ratio": 1, "Items": [{"Name": "x"}], "Note": null, "Ver": "2.1.1"});
        let b =
            json!({"Success": false, "Count": 0, "Ratio": 0.5, "Items": [], "Note": "n", "Ver": "2.1.1", "Extra": 1});
        let schema = infer(&[&a, &b]).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["Success", "Count", "Ratio", "Ver"]), "numbers, booleans and Ver");
        assert_eq!(schema["properties"]["Ratio"]["type"], "number", "an integer beside a number");
        assert_eq!(schema["properties"]["Note"]["type"], json!(["null", "string"]));
        assert_eq!(schema["properties"]["Ver"]["type"], json!(["null", "string"]), "a C# string may be null");
        assert_eq!(schema["properties"]["Success"]["type"], "boolean", "a C# bool may not");
        assert_eq!(schema["properties"]["Items"]["items"]["properties"]["Name"]["type"], json!(["null", "string"]));
        assert_eq!(schema["properties"]["Extra"]["type"], "integer");
        assert!(schema.get("additionalProperties").is_none(), "open: an answer may hold more");
        assert_eq!(infer(&[]), None);
        assert_eq!(infer(&[&json!([1])]), None);
    }
}

//! MCP output snapshots: redacting what differs from run to run (in the
//! one vocabulary of [`editor_link::redaction`]), reading
//! insta's `.snap` files, and saying field by field where an answer differs
//! from its snapshot.

use std::path::Path;

use editor_link::redaction::{Redactor, blank_volatile};
use serde_json::{Value, json};

/// The redaction of one snapshot: the project's forms (as given, canonical,
/// as Unity writes it) and the numbering of session ids, ports and pids,
/// kept across every answer of the snapshot. The home folder and the user
/// name are left alone: a snapshot's answers never hold them.
pub fn redactor(project: Option<&Path>) -> Redactor {
    Redactor::with_values(project, None, None)
}

/// An MCP answer made comparable: a text block that is exactly the result's
/// structuredContent as JSON is shown as a placeholder (so a snapshot shows
/// the content once); the bridge's version and the volatile values are
/// blanked, and the run's own values redacted ([`editor_link::redaction`]'s
/// one vocabulary). A text block that is *not* the structured content
/// stays, and so shows up in a difference.
pub fn comparable(mut answer: Value, redactor: &mut Redactor) -> Value {
    if let Some(result) = answer.get_mut("result") {
        if let (Some(text), Some(structured)) = (result["content"][0]["text"].as_str(), result.get("structuredContent"))
        {
            let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            if &parsed == structured {
                result["content"][0]["text"] = json!("[the structuredContent, as JSON text]");
            }
        }
    }
    // The bridge's version, which a 2026-07-28 result names in `_meta`: a
    // snapshot holds for every release.
    if let Some(server) = answer.pointer_mut("/result/_meta/io.modelcontextprotocol~1serverInfo/version") {
        *server = json!("${VERSION}");
    }
    if let Some(object) = answer.as_object_mut() {
        // The client's own numbering, not the bridge's answer.
        object.remove("id");
    }
    blank_volatile(&mut answer);
    redactor.redact(&mut answer);
    answer
}

/// The value of an insta `.snap` file (its `---` header skipped).
pub fn parse_insta(text: &str) -> Result<Value, String> {
    let body = match text.strip_prefix("---\n") {
        Some(rest) => match rest.find("\n---\n") {
            Some(end) => &rest[end + 5..],
            None => return Err("the snapshot's header does not end (no second ---)".into()),
        },
        None => text,
    };
    serde_json::from_str(body).map_err(|e| format!("the snapshot is not JSON: {e}"))
}

/// Where `actual` differs from `expected`, as `[0].answer.result.field:
/// expected …, got …` (at most `limit` of them). The differ is the replay's
/// (`fake_unity::replay::matching::diff`, numbers compared as numbers), in
/// a snapshot's words.
pub fn differences(expected: &Value, actual: &Value, limit: usize) -> Vec<String> {
    fake_unity::replay::matching::diff(expected, actual, &[])
        .into_iter()
        .take(limit)
        .map(|d| match (&d.recorded, &d.received) {
            (Some(e), Some(a)) => format!("{}: expected {}, got {}", d.path, short(e), short(a)),
            (Some(e), None) => format!("{}: missing (expected {})", d.path, short(e)),
            (None, Some(a)) => format!("{}: not expected (got {})", d.path, short(a)),
            (None, None) => d.path,
        })
        .collect()
}

fn short(value: &Value) -> String {
    crate::wire_log::excerpt(value.to_string().as_bytes()).chars().take(160).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_in_the_vocabulary_of_transcripts() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().to_string_lossy().into_owned();
        let mut redactor = redactor(Some(dir.path()));
        let answer = json!({"id": 7, "result": {"id": 21002, "name": "Main Camera", "CompletedAt": "x", "SearchDurationMs": 3,
                            "Path": format!("{project}/Assets/a.cs"), "when": "2026-01-01T00:00:00Z", "port": 8700,
                            "children": [{"id": 3}]}});
        assert_eq!(
            comparable(answer, &mut redactor),
            json!({"result": {"id": "${ID}", "name": "Main Camera", "CompletedAt": "${TIME}", "SearchDurationMs": "${DURATION}",
                   "Path": "${PROJECT}/Assets/a.cs", "when": "${TIME}", "port": "${PORT_1}", "children": [{"id": "${ID}"}]}})
        );
        // Numbered across the answers of one snapshot.
        let next = comparable(json!({"result": {"port": 8701, "again": {"port": 8700}}}), &mut redactor);
        assert_eq!(next, json!({"result": {"port": "${PORT_2}", "again": {"port": "${PORT_1}"}}}));
    }

    #[test]
    fn differences_name_the_field() {
        let expected = json!([{"result": {"a": 1, "list": [1, 2], "gone": true}}]);
        let actual = json!([{"result": {"a": 2, "list": [1, 2, 3], "new": 0}}]);
        let d = differences(&expected, &actual, 10);
        assert_eq!(
            d,
            vec![
                "[0].result.a: expected 1, got 2",
                "[0].result.list[2]: not expected (got 3)",
                "[0].result.gone: missing (expected true)",
                "[0].result.new: not expected (got 0)",
            ]
        );
        assert_eq!(differences(&expected, &actual, 2).len(), 2);
        // Numbers compare as numbers, as JSON means them.
        assert!(differences(&json!({"n": 1.0}), &json!({"n": 1}), 10).is_empty());
        assert!(differences(&expected, &expected, 10).is_empty());
    }

    #[test]
    fn reads_insta_files() {
        let text = "---\nsource: x.rs\nexpression: y\n---\n[\n  1\n]\n";
        assert_eq!(parse_insta(text).unwrap(), json!([1]));
        assert!(parse_insta("---\nsource: x\n").is_err());
    }
}

//! JSON kept as the bytes it arrived in.
//!
//! A tool's result crosses the bridge without becoming a tree: the Editor's
//! frame is parsed once to find it ([`RawJson`] is a slice of the frame's
//! own buffer), its top level is read for what the bridge must know
//! (`Success`, screenshots, the scalars a summary names), and the MCP answer
//! writes it out twice — escaped as the text block, verbatim as
//! `structuredContent` — a piece at a time. A 64 MiB result is held once,
//! where building it as a `serde_json::Value`, then as text, then as the
//! answer's line held it about six times.

use std::io::{self, Write};

use bytes::Bytes;
use indexmap::IndexMap;
use serde_json::{Value, value::RawValue};

/// One JSON value, as text. Always valid JSON and UTF-8.
#[derive(Clone, PartialEq, Eq)]
pub struct RawJson(Bytes);

impl std::fmt::Debug for RawJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 200;
        let text = self.as_str();
        match text.char_indices().nth(SHOWN) {
            Some((cut, _)) => write!(f, "RawJson({}… {} bytes)", &text[..cut], text.len()),
            None => write!(f, "RawJson({text})"),
        }
    }
}

impl RawJson {
    /// `bytes` if they are one JSON value (whitespace around it allowed).
    pub fn new(bytes: Bytes) -> Result<RawJson, serde_json::Error> {
        serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)?;
        Ok(RawJson(bytes))
    }

    /// A slice of `frame`, which was just parsed: `raw` borrows from it.
    pub(crate) fn within(frame: &Bytes, raw: &RawValue) -> RawJson {
        let text = raw.get().as_bytes();
        let start = text.as_ptr() as usize - frame.as_ptr() as usize;
        RawJson(frame.slice(start..start + text.len()))
    }

    pub fn from_value(value: &Value) -> RawJson {
        // Serialising a Value cannot fail (its keys are strings).
        RawJson(Bytes::from(serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec())))
    }

    pub fn to_value(&self) -> Value {
        // Valid JSON by construction; a number serde_json cannot hold is
        // the only way this fails, and then null says so plainly.
        serde_json::from_slice(&self.0).unwrap_or(Value::Null)
    }

    pub fn as_str(&self) -> &str {
        // Checked at construction; a failure here would be a bug, shown
        // rather than hidden.
        std::str::from_utf8(&self.0).unwrap_or("\"(not UTF-8)\"")
    }

    pub fn bytes(&self) -> &Bytes {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The members of a JSON object, in order, their values still text
    /// (a member named twice has its last value, as in a `Value`); `None`
    /// when it is not an object.
    pub fn members(&self) -> Option<IndexMap<String, &RawValue>> {
        if self.0.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        serde_json::from_slice(&self.0).ok()
    }
}

/// Appends `text` to `out` as the contents of a JSON string (no quotes).
pub fn escape_into(text: &str, out: &mut Vec<u8>) {
    let mut scratch = Vec::with_capacity(text.len() + 2);
    // Writing a str to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut scratch, text);
    out.extend_from_slice(&scratch[1..scratch.len() - 1]);
}

/// The largest piece of `text` at most `max` bytes long that ends on a
/// character boundary (at least one character).
pub fn piece(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == 0 {
        end = text.char_indices().nth(1).map_or(text.len(), |(i, _)| i);
    }
    &text[..end]
}

/// Writes the JSON text `raw` indented by two spaces per level (as
/// `serde_json::to_writer_pretty` would), a token at a time: the result
/// of a compact value as a file people and tools can read line by line,
/// without building the value. `raw` must be valid JSON.
pub fn write_pretty(raw: &[u8], out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, out);
    let mut depth = 0usize;
    let (mut in_string, mut escaped) = (false, false);
    // After an opening bracket: a newline comes before the next value,
    // unless the bracket closes at once (`{}`, `[]`).
    let mut opened = false;
    let newline = |out: &mut io::BufWriter<_>, depth: usize| -> io::Result<()> {
        out.write_all(b"\n")?;
        for _ in 0..depth {
            out.write_all(b"  ")?;
        }
        Ok(())
    };
    let mut run_start = 0;
    for (i, &b) in raw.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                out.write_all(&raw[run_start..=i])?;
            }
            continue;
        }
        if b.is_ascii_whitespace() {
            continue;
        }
        if opened && b != b'}' && b != b']' {
            newline(&mut out, depth)?;
        }
        let was_opened = std::mem::replace(&mut opened, false);
        match b {
            b'"' => {
                in_string = true;
                run_start = i;
            }
            b'{' | b'[' => {
                out.write_all(&[b])?;
                depth += 1;
                opened = true;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if !was_opened {
                    newline(&mut out, depth)?;
                }
                out.write_all(&[b])?;
            }
            b',' => {
                out.write_all(b",")?;
                newline(&mut out, depth)?;
            }
            b':' => out.write_all(b": ")?,
            _ => out.write_all(&[b])?,
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn pretty(raw: &str) -> String {
        let mut out = Vec::new();
        write_pretty(raw.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_pretty_file_reads_as_serde_json_writes_it() {
        for value in [
            json!({"a": 1, "b": [1, 2, {"c": "x,y:{}[]\"\\"}], "e": {}, "f": [], "g": null}),
            json!([]),
            json!("just a string"),
            json!([[], [[]], {"k": {"k": {}}}]),
        ] {
            let expected = serde_json::to_string_pretty(&value).unwrap();
            assert_eq!(pretty(&value.to_string()), expected);
            // Whitespace the Editor put in does not matter.
            assert_eq!(pretty(&serde_json::to_string_pretty(&value).unwrap()), expected);
        }
    }

    #[test]
    fn members_are_read_without_reading_their_values() {
        let raw = RawJson::new(Bytes::from_static(br#" {"Success": false, "Big": [1, 2, 3], "S": "x"}"#)).unwrap();
        let members = raw.members().unwrap();
        assert_eq!(members.keys().collect::<Vec<_>>(), ["Success", "Big", "S"]);
        assert_eq!(members["Big"].get(), "[1, 2, 3]");
        assert!(RawJson::new(Bytes::from_static(b"[1]")).unwrap().members().is_none());
        // A member named twice reads as serde_json's Value reads it: the last.
        let twice = RawJson::new(Bytes::from_static(br#"{"a":1,"a":2}"#)).unwrap();
        assert_eq!(twice.members().unwrap()["a"].get(), "2");
        assert!(RawJson::new(Bytes::from_static(b"{")).is_err());
    }

    #[test]
    fn pieces_end_on_character_boundaries() {
        assert_eq!(piece("héllo", 2), "h");
        assert_eq!(piece("héllo", 3), "hé");
        assert_eq!(piece("é", 1), "é");
        assert_eq!(piece("abc", 10), "abc");
    }

    proptest! {
        #[test]
        fn pretty_files_parse_to_the_same_value(value in any_json()) {
            let compact = value.to_string();
            let text = pretty(&compact);
            prop_assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value.clone());
            prop_assert_eq!(text, serde_json::to_string_pretty(&value).unwrap());
        }

        #[test]
        fn escaped_pieces_join_to_the_escaped_whole(text in "\\PC{0,40}", max in 1usize..8) {
            let (mut joined, mut rest) = (Vec::new(), text.as_str());
            while !rest.is_empty() {
                let p = piece(rest, max);
                escape_into(p, &mut joined);
                rest = &rest[p.len()..];
            }
            let whole = serde_json::to_string(&text).unwrap();
            prop_assert_eq!(String::from_utf8(joined).unwrap(), &whole[1..whole.len() - 1]);
        }
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[ -~\\n\"\\\\é]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
                prop::collection::vec(("[a-z\",:{]{0,5}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }
}

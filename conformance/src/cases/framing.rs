//! §2 Framing.

use std::time::Duration;

use editor_link::framing::{Framing, frame_bytes};
use serde_json::json;

use crate::{
    case::{Case, CheckFuture, CheckResult, Level, Needs, Requires, check},
    ensure,
    finding::Finding,
    target::Session,
};

const REF: &str = "docs/editor-link-protocol.md §2";

/// Raw header blocks a reader must accept (`{LEN}` is the body's length).
const ACCEPTED_HEADERS: &[(&str, &str, &str)] = &[
    ("2.header-name-case.lower", "the name in lower case", "content-length: {LEN}\r\n\r\n"),
    ("2.header-name-case.upper", "the name in upper case", "CONTENT-LENGTH: {LEN}\r\n\r\n"),
    (
        "2.header-extra-before",
        "another header before Content-Length",
        "Content-Type: application/json\r\nContent-Length: {LEN}\r\n\r\n",
    ),
    ("2.header-extra-after", "another header after Content-Length", "Content-Length: {LEN}\r\nX-Trace: abc\r\n\r\n"),
    ("2.header-value-spaces", "spaces around the value", "Content-Length:    {LEN}   \r\n\r\n"),
    ("2.header-value-tab", "a tab before the value", "Content-Length:\t{LEN}\r\n\r\n"),
];

/// Header blocks that are framing errors (answered, then the connection closes).
const BAD_HEADERS: &[(&str, &str, &str)] = &[
    ("2.bad-header.missing-length", "no Content-Length", "X-Not-A-Length: 12\r\n\r\n"),
    ("2.bad-header.not-a-number", "a value that is not a number", "Content-Length: twelve\r\n\r\n"),
    ("2.bad-header.negative", "a negative value", "Content-Length: -5\r\n\r\n"),
    (
        "2.bad-header.two-values",
        "two different Content-Length values",
        "Content-Length: 12\r\nContent-Length: 14\r\n\r\n",
    ),
];

pub fn cases() -> Vec<Case> {
    let mut cases = fixed_cases();
    for (id, what, head) in ACCEPTED_HEADERS {
        cases.push(Case {
            id: (*id).into(),
            requirement: format!("A header block with {what} is read as any other: the request is answered.").into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(move |s| Box::pin(header_accepted(s, head))),
        });
    }
    for (id, what, head) in BAD_HEADERS {
        cases.push(Case {
            id: (*id).into(),
            requirement: format!(
                "A header block with {what} is a framing error: id null, -32700, data.type framing_error, then the connection closes; the Editor keeps serving others."
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(move |s| Box::pin(header_refused(s, head))),
        });
    }
    cases
}

fn fixed_cases() -> Vec<Case> {
    vec![
        Case {
            id: "2.reply-header-exact".into(),
            requirement: "A reply in header framing is exactly `Content-Length: N\\r\\n\\r\\n` then N bytes of compact JSON.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(reply_header_exact),
        },
        Case {
            id: "2.length-in-bytes".into(),
            requirement: "Content-Length counts bytes of UTF-8, not characters: a request with multi-byte characters is read whole and echoed exactly.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(length_in_bytes),
        },
        Case {
            id: "2.newline-crlf".into(),
            requirement: "In newline framing a \\r before the \\n is dropped: CRLF-terminated requests are answered.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::NewlineFraming),
            check: check(newline_crlf),
        },
        Case {
            id: "2.newline-leading-whitespace".into(),
            requirement: "The framing is chosen by the first byte that is not ASCII whitespace: blank lines before '{' still mean newline framing.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::NewlineFraming),
            check: check(newline_leading_whitespace),
        },
        Case {
            id: "2.newline-coalesced".into(),
            requirement: "Several lines arriving in one read are all answered (newline framing).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::NewlineFraming),
            check: check(newline_coalesced),
        },
        Case {
            id: "2.newline-parse-error".into(),
            requirement: "In newline framing a line that is not JSON is answered -32700 parse_error and the connection stays open.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::NewlineFraming),
            check: check(newline_parse_error),
        },
        Case {
            id: "2.slow-client".into(),
            requirement: "A client writing a frame a few bytes at a time with pauses between (a slow link) is answered.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(slow_client),
        },
        Case {
            id: "2.partial-frame-waits".into(),
            requirement: "Half a frame left hanging blocks neither other clients nor its own connection: the rest, sent later, completes it.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(partial_frame_waits),
        },
        Case {
            id: "2.header-framing".into(),
            requirement: "A request in header framing is answered in header framing (Content-Length, then compact JSON).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(header_framing),
        },
        Case {
            id: "2.newline-framing".into(),
            requirement: "A connection whose first byte is '{' speaks newline framing, and is answered in it.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::NewlineFraming),
            check: check(newline_framing),
        },
        Case {
            id: "2.coalesced-frames".into(),
            requirement: "Several frames arriving in one read are all decoded and answered.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(coalesced_frames),
        },
        Case {
            id: "2.split-frames".into(),
            requirement: "A frame split across reads (one byte at a time, inside the header and inside a multi-byte character) is decoded.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(split_frames),
        },
        Case {
            id: "2.parse-error".into(),
            requirement: "A frame whose body is not JSON is answered with id null, -32700, data.type parse_error, and the connection stays open.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(parse_error),
        },
        Case {
            id: "2.frame-too-large".into(),
            requirement: "A frame over the limit is discarded and answered with id null, -32600, data.type frame_too_large; the connection stays usable (ours; uLoopMCP closes it).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::FrameTooLarge),
            check: check(frame_too_large),
        },
    ]
}

/// A ping in `framing`; the link decodes only that framing, so an answer in
/// the other one fails to read.
async fn ping_in(s: Session, framing: Framing) -> CheckResult {
    let mut link = s.link(framing).await?;
    link.probe_with(framing.as_str()).await?;
    Ok(())
}

fn header_framing(s: Session) -> CheckFuture {
    Box::pin(ping_in(s, Framing::Header))
}

fn newline_framing(s: Session) -> CheckFuture {
    Box::pin(ping_in(s, Framing::Newline))
}

fn coalesced_frames(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let mut bytes = Vec::new();
        for n in 1..=3 {
            let body = link.probe().request(n, &n.to_string());
            bytes.extend_from_slice(
                &frame_bytes(Framing::Header, &link.signed(body.to_string().as_bytes()))
                    .map_err(|e| Finding::Harness(e.to_string()))?,
            );
        }
        link.send_raw(&bytes).await?;
        let mut seen = Vec::new();
        while seen.len() < 3 {
            let message = link.message().await?;
            if let Some(id) = message.get("id").and_then(|i| i.as_u64()) {
                seen.push(id);
            }
        }
        seen.sort_unstable();
        ensure!(seen == [1, 2, 3], "answers for ids {seen:?}");
        Ok(())
    })
}

fn split_frames(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let body = link.probe().request("split", "日本語 ☃ 𝄞");
        let bytes = frame_bytes(Framing::Header, &link.signed(body.to_string().as_bytes()))
            .map_err(|e| Finding::Harness(e.to_string()))?;
        for b in bytes.iter() {
            link.send_raw(&[*b]).await?;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let response = link.response(&json!("split")).await?;
        link.probe().check(&response, "日本語 ☃ 𝄞")
    })
}

fn parse_error(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.send_body(b"{\"jsonrpc\": \"2.0\", oops").await?;
        let error = link.message().await?;
        ensure!(error["id"].is_null(), "the error's id is {} (must be null)", error["id"]);
        ensure!(error["error"]["code"] == -32700, "code {} (must be -32700)", error["error"]["code"]);
        ensure!(
            error["error"]["data"]["type"] == "parse_error",
            "data.type {} (must be parse_error)",
            error["error"]["data"]["type"]
        );
        link.probe_with("after")
            .await
            .map_err(|e| e.into_violation(|why| format!("the connection is not usable after the error: {why}")))?;
        Ok(())
    })
}

fn frame_too_large(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        // Over the 8 MiB default request limit of protocol §2.
        let filler = "x".repeat(9 * 1024 * 1024);
        let big = link.probe().request("big", &filler);
        link.send_body(big.to_string().as_bytes()).await?;
        let error = link.message().await?;
        ensure!(error["id"].is_null(), "the error's id is {} (must be null)", error["id"]);
        ensure!(error["error"]["code"] == -32600, "code {} (must be -32600)", error["error"]["code"]);
        ensure!(error["error"]["data"]["type"] == "frame_too_large", "data.type {}", error["error"]["data"]["type"]);
        link.probe_with("after").await?;
        Ok(())
    })
}

/// The answer to the probe `id` that carried `message` ([`crate::editor_client::Probe::check`]).
async fn expect_echo(link: &mut crate::editor_client::EditorClient, id: &str, message: &str) -> CheckResult {
    let response = link.response(&json!(id)).await?;
    link.probe().check(&response, message)
}

async fn header_accepted(s: Session, head: &str) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    let body = link.signed(&link.probe().body("h", "header"));
    let mut bytes = head.replace("{LEN}", &body.len().to_string()).into_bytes();
    bytes.extend_from_slice(&body);
    link.send_raw(&bytes).await?;
    expect_echo(&mut link, "h", "header").await
}

async fn header_refused(s: Session, head: &str) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    let mut bytes = head.as_bytes().to_vec();
    bytes.extend_from_slice(br#"{"id":1}"#);
    link.send_raw(&bytes).await?;
    let error = link.message().await?;
    ensure!(error["id"].is_null(), "the error's id is {} (must be null)", error["id"]);
    ensure!(error["error"]["code"] == -32700, "code {} (must be -32700)", error["error"]["code"]);
    ensure!(error["error"]["data"]["type"] == "framing_error", "data.type {}", error["error"]["data"]["type"]);
    ensure!(link.closes_within(Duration::from_secs(3)).await, "the connection stayed open after a framing error");
    let mut fresh = s.link(Framing::Header).await?;
    fresh.probe_with("fresh").await?;
    Ok(())
}

fn length_in_bytes(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let message = "Grüße, 日本語, ☃ and 𝄞";
        link.send_body(&link.probe().body("utf8", message)).await?;
        expect_echo(&mut link, "utf8", message).await?;
        // And the next frame is still found where it starts.
        link.send_body(&link.probe().body("next", "ascii")).await?;
        expect_echo(&mut link, "next", "ascii").await
    })
}

fn newline_crlf(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Newline).await?;
        let mut bytes = link.signed(&link.probe().body("crlf", "crlf"));
        bytes.extend_from_slice(b"\r\n");
        link.send_raw(&bytes).await?;
        expect_echo(&mut link, "crlf", "crlf").await
    })
}

fn newline_leading_whitespace(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Newline).await?;
        let mut bytes = b"\r\n\n  ".to_vec();
        bytes.extend_from_slice(&link.signed(&link.probe().body("ws", "ws")));
        bytes.push(b'\n');
        link.send_raw(&bytes).await?;
        expect_echo(&mut link, "ws", "ws").await
    })
}

fn newline_coalesced(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Newline).await?;
        let mut bytes = Vec::new();
        for id in ["n1", "n2", "n3"] {
            bytes.extend_from_slice(&link.signed(&link.probe().body(id, id)));
            bytes.push(b'\n');
        }
        link.send_raw(&bytes).await?;
        let mut seen = Vec::new();
        while seen.len() < 3 {
            let message = link.message().await?;
            if let Some(id) = message["id"].as_str() {
                seen.push(id.to_owned());
            }
        }
        seen.sort();
        ensure!(seen == ["n1", "n2", "n3"], "answers for ids {seen:?}");
        Ok(())
    })
}

fn newline_parse_error(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Newline).await?;
        link.send_raw(b"{\"jsonrpc\": \"2.0\", oops\n").await?;
        let error = link.message().await?;
        ensure!(
            error["id"].is_null()
                && error["error"]["code"] == -32700
                && error["error"]["data"]["type"] == "parse_error",
            "answered {error}"
        );
        link.send_raw(&[link.signed(&link.probe().body("after", "after")), b"\n".to_vec()].concat()).await?;
        expect_echo(&mut link, "after", "after").await
    })
}

fn slow_client(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let bytes = frame_bytes(Framing::Header, &link.signed(&link.probe().body("slow", "slow")))
            .map_err(|e| Finding::Harness(e.to_string()))?;
        for chunk in bytes.chunks(7) {
            link.send_raw(chunk).await?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        expect_echo(&mut link, "slow", "slow").await
    })
}

fn partial_frame_waits(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let bytes = frame_bytes(Framing::Header, &link.signed(&link.probe().body("half", "half")))
            .map_err(|e| Finding::Harness(e.to_string()))?;
        let (first, rest) = bytes.split_at(bytes.len() / 2);
        link.send_raw(first).await?;
        // Meanwhile, another client is served.
        let mut other = s.link(Framing::Header).await?;
        other.probe_with("other").await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        link.send_raw(rest).await?;
        expect_echo(&mut link, "half", "half").await
    })
}

fn reply_header_exact(s: Session) -> CheckFuture {
    Box::pin(async move {
        let link = s.link(Framing::Header).await?;
        let body = link.signed(&link.probe().body("exact", "é"));
        let mut raw = link.into_raw();
        raw.send(&frame_bytes(Framing::Header, &body).map_err(|e| Finding::Harness(e.to_string()))?).await?;
        let bytes = raw.read_until_quiet(Duration::from_millis(300)).await?;
        let text = String::from_utf8_lossy(&bytes);
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            return crate::finding::violation(format!("no header block in {text:?}"));
        };
        ensure!(
            head == format!("Content-Length: {}", body.len()),
            "header block {head:?} for a body of {} bytes",
            body.len()
        );
        let _: serde_json::Value = serde_json::from_str(body).map_err(|e| Finding::Violation(format!("body: {e}")))?;
        ensure!(is_compact(body), "the body is not compact JSON: {body}");
        Ok(())
    })
}

/// JSON text without whitespace between tokens. Strings are as the writer
/// wrote them: `\u00e9` and `é` are the same JSON (uLoopMCP's Newtonsoft
/// writes the character; other writers escape it).
fn is_compact(json: &str) -> bool {
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') | (false, _, '"') => in_string = !in_string,
            (false, _, ' ' | '\t' | '\n' | '\r') => return false,
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn compact_json_may_escape_characters_but_has_no_whitespace_between_tokens() {
        assert!(super::is_compact(r#"{"a":"x y \" z","b":[1,2],"c":"\u00e9"}"#));
        assert!(super::is_compact(r#"{"c":"é"}"#));
        assert!(!super::is_compact(r#"{"a": 1}"#));
        assert!(!super::is_compact("{\"a\":1}\n"));
    }
}

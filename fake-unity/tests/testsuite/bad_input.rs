//! Bad input of every kind gets the error of protocol §2/§3, loses nothing,
//! and never stops the Editor from serving.

use std::time::Duration;

use editor_link::{
    framing::{Framing, frame_bytes},
    jsonrpc::Message,
};
use proptest::prelude::*;
use rstest::rstest;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Client, TestEditor, kind, none};

/// A fresh connection still gets answers.
async fn still_serving(editor: &TestEditor) {
    let mut client = editor.connect().await;
    assert_eq!(client.ok("ping", json!({"Message": "alive"})).await["Message"], "Unity MCP Bridge received: alive");
}

#[rstest]
#[case::not_a_header(b"hello world\r\n".as_slice(), "malformed header line")]
#[case::no_content_length(b"X-Other: 1\r\n\r\n{}".as_slice(), "no Content-Length")]
#[case::two_lengths(b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}".as_slice(), "two different Content-Length")]
#[case::not_a_number(b"Content-Length: ten\r\n\r\n".as_slice(), "not a non-negative base-10 integer")]
#[case::negative(b"Content-Length: -5\r\n\r\n".as_slice(), "not a non-negative base-10 integer")]
#[case::bare_line_feed(b"Content-Length: 2\n\n{}".as_slice(), "bare line feed")]
#[case::binary(b"\x00\x01\x02\xff\xfe".as_slice(), "malformed header line")]
#[tokio::test]
async fn a_bad_header_block_is_a_framing_error_then_a_close(#[case] input: &[u8], #[case] says: &str) {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.send_raw(input).await;
    let err = client.null_id_error().await;
    assert_eq!((err.code, kind(&err)), (-32700, "framing_error"));
    assert!(err.detail().contains(says), "{}", err.detail());
    assert!(client.until_closed().await.is_empty(), "nothing follows the framing error");
    still_serving(&editor).await;
}

#[rstest]
#[case::header(Framing::Header)]
#[case::newline(Framing::Newline)]
#[tokio::test]
async fn invalid_json_is_a_parse_error_and_the_connection_stays(#[case] framing: Framing) {
    let editor = TestEditor::start().await;
    let mut client = editor.connect_with(framing).await;
    // Newline framing is detected from a '{', so the bad body starts with one.
    client.send_raw(&frame_bytes(framing, b"{\"jsonrpc\": oops").unwrap()).await;
    let err = client.null_id_error().await;
    assert_eq!((err.code, kind(&err)), (-32700, "parse_error"));
    assert_eq!(
        client.ok("ping", json!({"Message": "still here"})).await["Message"],
        "Unity MCP Bridge received: still here"
    );
}

#[tokio::test]
async fn a_batch_is_rejected_with_one_error() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    client.send_raw(&frame_bytes(Framing::Header, batch).unwrap()).await;
    let err = client.null_id_error().await;
    assert_eq!((err.code, kind(&err)), (-32600, "invalid_request"));
    let id = client.request("ping", none()).await;
    // Exactly one answer came for the batch: the next message is the ping's.
    match client.recv().await.unwrap() {
        Message::Response(r) => assert_eq!(r.id, Some(id)),
        other => panic!("expected the ping answer, got {other:?}"),
    }
}

#[rstest]
#[case::not_an_object(r#"42"#, None)]
#[case::bad_id_type(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, None)]
#[case::bad_method_type(r#"{"jsonrpc":"2.0","id":5,"method":7}"#, Some(5))]
#[case::wrong_version(r#"{"jsonrpc":"1.0","id":6,"method":"ping"}"#, Some(6))]
#[tokio::test]
async fn invalid_requests_are_answered_with_their_id_when_known(#[case] raw: &str, #[case] id: Option<u64>) {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.send_raw(&frame_bytes(Framing::Header, raw.as_bytes()).unwrap()).await;
    let Some(Message::Response(response)) = client.recv().await else { panic!("no answer to {raw}") };
    assert_eq!(response.id, id.map(Into::into));
    let err = response.outcome.unwrap_err();
    assert_eq!((err.code, kind(&err)), (-32600, "invalid_request"));
    still_serving(&editor).await;
}

#[tokio::test]
async fn a_huge_content_length_is_refused_without_waiting_for_the_body() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.send_raw(b"Content-Length: 999999999999\r\n\r\n").await;
    let err = client.null_id_error().await;
    assert_eq!((err.code, kind(&err)), (-32600, "frame_too_large"));
    assert_eq!(err.data.as_ref().unwrap()["size"], 999_999_999_999u64);
    still_serving(&editor).await;
}

#[rstest]
#[case::header(Framing::Header)]
#[case::newline(Framing::Newline)]
#[tokio::test]
async fn an_over_limit_frame_is_skipped_and_the_next_one_answered(#[case] framing: Framing) {
    let editor = TestEditor::start_with(|c| c.max_request_bytes = 4096).await;
    let mut client = editor.connect_with(framing).await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"Message": "x".repeat(10_000)}});
    let mut bytes = frame_bytes(framing, big.to_string().as_bytes()).unwrap().to_vec();
    bytes.extend_from_slice(
        &frame_bytes(framing, br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"Message":"next"}}"#).unwrap(),
    );
    // Sent in pieces, as a slow client would.
    for chunk in bytes.chunks(700) {
        client.send_raw(chunk).await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let err = client.null_id_error().await;
    assert_eq!((err.code, kind(&err)), (-32600, "frame_too_large"));
    let next = client.response(&2u64.into()).await;
    assert_eq!(next.outcome.unwrap()["Message"], "Unity MCP Bridge received: next");
    let stats = editor.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["framesTooLarge"], 1);
}

#[tokio::test]
async fn a_frame_sent_byte_by_byte_is_decoded() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let bytes = frame_bytes(
        Framing::Header,
        r#"{"jsonrpc":"2.0","id":"slow","method":"ping","params":{"Message":"ü€𝄞"}}"#.as_bytes(),
    )
    .unwrap();
    for b in bytes.iter() {
        client.send_raw(&[*b]).await;
    }
    let response = client.response(&"slow".into()).await;
    assert_eq!(response.outcome.unwrap()["Message"], "Unity MCP Bridge received: ü€𝄞");
}

#[tokio::test]
async fn wrong_parameter_types_name_the_parameter() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    for (tool, params, parameter) in [
        ("get-logs", json!({"MaxCount": "ten"}), "MaxCount"),
        ("get-logs", json!({"LogType": "Fatal"}), "LogType"),
        ("get-logs", json!({"UseRegex": "yes"}), "UseRegex"),
        ("find-game-objects", json!({"SearchMode": "Fuzzy"}), "SearchMode"),
        ("find-game-objects", json!({"RequiredComponents": "Transform"}), "RequiredComponents"),
        ("find-game-objects", json!({"Layer": 40}), "Layer"),
        ("run-tests", json!({"TestMode": "Both"}), "TestMode"),
        ("get-hierarchy", json!({"MaxDepth": 1.5}), "MaxDepth"),
        ("unity-search", json!({"Providers": [1, 2]}), "Providers"),
        ("screenshot", json!({"ResolutionScale": 4}), "ResolutionScale"),
        ("execute-dynamic-code", json!({"Parameters": "a=1"}), "Parameters"),
        ("control-play-mode", json!({"Action": "Rewind"}), "Action"),
        ("ping", json!({"TimeoutSeconds": -1}), "TimeoutSeconds"),
    ] {
        let err = client.err(tool, params.clone()).await;
        assert_eq!((err.code, kind(&err)), (-32602, "invalid_params"), "{tool} {params}");
        assert_eq!(err.data.as_ref().unwrap()["parameter"], parameter, "{tool} {params}");
        assert!(err.detail().contains(parameter), "{}", err.detail());
    }
}

#[tokio::test]
async fn an_unknown_tool_is_method_not_found() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let err = client.err("make-coffee", none()).await;
    assert_eq!((err.code, kind(&err)), (-32601, "method_not_found"));
    assert_eq!(err.detail(), "Unknown tool: make-coffee");
}

#[tokio::test]
async fn a_client_vanishing_mid_frame_harms_no_one() {
    let editor = TestEditor::start().await;
    let mut watcher = editor.connect().await;
    watcher.ok("ping", none()).await;
    for partial in [&b"Content-Len"[..], b"Content-Length: 100\r\n\r\n{\"jsonrpc\"", b"{\"jsonrpc\":\"2.0\",\"id\":1,"]
    {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", editor.port())).await.unwrap();
        stream.write_all(partial).await.unwrap();
        drop(stream);
    }
    // A reset rather than a close, too.
    let stream = std::net::TcpStream::connect(("127.0.0.1", editor.port())).unwrap();
    stream.set_nonblocking(true).unwrap();
    let socket = tokio::net::TcpStream::from_std(stream).unwrap();
    // A zero linger makes the close a reset; it cannot block the thread.
    #[allow(deprecated)]
    socket.set_linger(Some(Duration::ZERO)).unwrap();
    drop(socket);
    still_serving(&editor).await;
    assert_eq!(watcher.ok("ping", json!({"Message": "w"})).await["Message"], "Unity MCP Bridge received: w");
    let fake = &editor.fake;
    crate::support::eventually("the vanished connections to be cleaned up", || fake.editor().clients().len() <= 2)
        .await;
}

#[tokio::test]
async fn a_client_that_half_closes_still_gets_its_answers() {
    let editor = TestEditor::start().await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", editor.port())).await.unwrap();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(
        &frame_bytes(
            Framing::Newline,
            br#"{"jsonrpc":"2.0","id":1,"method":"debug-sleep","params":{"SleepSeconds":0.2}}"#,
        )
        .unwrap(),
    );
    bytes.extend_from_slice(&frame_bytes(Framing::Newline, br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).unwrap());
    stream.write_all(&bytes).await.unwrap();
    stream.shutdown().await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(crate::support::WAIT, stream.read_to_string(&mut out)).await.unwrap().unwrap();
    let ids: Vec<i64> =
        out.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [2, 1]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever bytes arrive, the Editor keeps serving other clients.
    #[test]
    fn arbitrary_bytes_never_stop_the_editor(
        bytes in prop::collection::vec(any::<u8>(), 0..4096),
        header_like in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async {
            let editor = TestEditor::start_with(|c| c.max_request_bytes = 1024).await;
            let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", editor.port())).await.unwrap();
            let mut input = if header_like { b"Content-Length: 10\r\n\r\n".to_vec() } else { Vec::new() };
            input.extend_from_slice(&bytes);
            let _ = stream.write_all(&input).await;
            let _ = stream.shutdown().await;
            let mut sink = Vec::new();
            let _ = tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut sink)).await;
            let mut client = Client::connect(editor.port(), Framing::Newline).await;
            let result = client.ok("ping", json!({"Message": "ok"})).await;
            assert_eq!(result["Message"], "Unity MCP Bridge received: ok");
        });
    }
}

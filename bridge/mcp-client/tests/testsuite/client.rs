use std::time::Duration;

use mcp_client::{Error, McpClient};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

const WAIT: Duration = Duration::from_secs(10);

/// A client over in-memory pipes, and the server's ends: what the client
/// writes (read line by line) and where the server writes.
fn pair() -> (McpClient, tokio::io::Lines<BufReader<DuplexStream>>, DuplexStream) {
    let (client_in, server_out) = tokio::io::duplex(1 << 16);
    let (server_in, client_out) = tokio::io::duplex(1 << 16);
    let client = McpClient::over(client_in, client_out, None);
    (client, BufReader::new(server_in).lines(), server_out)
}

async fn line(lines: &mut tokio::io::Lines<BufReader<DuplexStream>>) -> Value {
    let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap().unwrap().unwrap();
    serde_json::from_str(&line).unwrap()
}

#[tokio::test]
async fn a_line_half_written_when_a_wait_ends_is_read_whole_later() {
    let (mut client, _requests, mut server) = pair();
    server.write_all(br#"{"jsonrpc":"2.0","id":1,"#).await.unwrap();
    assert!(client.next_message(Duration::from_millis(50)).await.unwrap().is_none());
    server.write_all(br#""result":{"ok":true}}"#).await.unwrap();
    server.write_all(b"\n").await.unwrap();
    let message = client.next_message(WAIT).await.unwrap().unwrap();
    assert_eq!(message, json!({"jsonrpc": "2.0", "id": 1, "result": {"ok": true}}));
}

#[tokio::test]
async fn stray_lines_are_kept_or_with_strict_an_error() {
    let (mut client, _requests, mut server) = pair();
    server.write_all(b"log: starting\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n").await.unwrap();
    let message = client.next_message(WAIT).await.unwrap().unwrap();
    assert_eq!(message["method"], "n");
    assert_eq!(client.stray(), ["log: starting"]);

    let (client, _requests, mut server) = pair();
    let mut client = client.strict();
    server.write_all(b"{\"id\":1,\"result\":{}}\n").await.unwrap();
    match client.next_message(WAIT).await {
        Err(Error::Stray(line)) => assert_eq!(line, r#"{"id":1,"result":{}}"#, "no jsonrpc member"),
        other => panic!("expected a stray-line error, got {other:?}"),
    }
}

#[tokio::test]
async fn requests_from_the_server_are_answered_method_not_found() {
    let (mut client, mut requests, mut server) = pair();
    server.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}\n").await.unwrap();
    server.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n").await.unwrap();
    assert_eq!(client.next_message(WAIT).await.unwrap().unwrap()["id"], 7);
    let answer = line(&mut requests).await;
    assert_eq!(answer["id"], "s1");
    assert_eq!(answer["error"]["code"], -32601);
}

#[tokio::test]
async fn answers_are_matched_to_their_ids_in_any_order_and_strangers_are_errors() {
    let (mut client, mut requests, mut server) = pair();
    let a = client.request("ping", json!({})).await.unwrap();
    let b = client.request("ping", json!({})).await.unwrap();
    assert_eq!(line(&mut requests).await["id"], a);
    assert_eq!(line(&mut requests).await["id"], b);
    server.write_all(format!("{{\"jsonrpc\":\"2.0\",\"id\":{b},\"result\":{{\"n\":2}}}}\n").as_bytes()).await.unwrap();
    server.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n").await.unwrap();
    server.write_all(format!("{{\"jsonrpc\":\"2.0\",\"id\":{a},\"result\":{{\"n\":1}}}}\n").as_bytes()).await.unwrap();
    let answers = client.responses(&[a, b]).await.unwrap();
    assert_eq!(answers[0]["result"]["n"], 1);
    assert_eq!(answers[1]["result"]["n"], 2);
    assert_eq!(client.notifications.len(), 1, "the notification on the way is kept");

    server.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n").await.unwrap();
    assert!(matches!(client.response(&json!(3)).await, Err(Error::Unexpected(m)) if m["id"] == 99));
}

#[tokio::test]
async fn a_closed_output_is_told_from_a_slow_one() {
    let (mut client, _requests, mut server) = pair();
    let id = json!(1);
    match client.response_within(&id, Duration::from_millis(50)).await {
        Err(Error::NoAnswer { id: asked, .. }) => assert_eq!(asked, 1),
        other => panic!("expected no answer in time, got {other:?}"),
    }
    // A last line without its newline is still read, then the end.
    server.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}").await.unwrap();
    drop(server);
    assert_eq!(client.response(&id).await.unwrap()["id"], 1);
    assert!(matches!(client.next_message(WAIT).await, Err(Error::Closed)));
}

#[tokio::test]
async fn tools_list_pages_are_followed_and_a_failed_initialize_says_so() {
    let (mut client, mut requests, mut server) = pair();
    let serve = tokio::spawn(async move {
        let first = line(&mut requests).await;
        assert_eq!(first["params"], json!({}));
        let answer =
            json!({"jsonrpc": "2.0", "id": first["id"], "result": {"tools": [{"name": "a"}], "nextCursor": "p2"}});
        server.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        let second = line(&mut requests).await;
        assert_eq!(second["params"], json!({"cursor": "p2"}));
        let answer = json!({"jsonrpc": "2.0", "id": second["id"], "result": {"tools": [{"name": "b"}]}});
        server.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        let init = line(&mut requests).await;
        let answer = json!({"jsonrpc": "2.0", "id": init["id"], "error": {"code": -32602, "message": "no"}});
        server.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        (requests, server)
    });
    let names: Vec<Value> = client.list_tools().await.unwrap().into_iter().map(|t| t["name"].clone()).collect();
    assert_eq!(names, [json!("a"), json!("b")]);
    match client.initialize().await {
        Err(Error::Failed { method, answer }) => {
            assert_eq!(method, "initialize");
            assert_eq!(answer["error"]["code"], -32602);
        }
        other => panic!("expected initialize to fail, got {other:?}"),
    }
    let (mut requests, _server) = serve.await.unwrap();
    // No `notifications/initialized` after a failed initialize.
    assert!(tokio::time::timeout(Duration::from_millis(50), requests.next_line()).await.is_err());
}

/// A real child process: a shell that echoes one answer, writes a stray
/// line and a line on stderr, and exits when its stdin ends.
#[cfg(unix)]
#[tokio::test]
async fn a_child_process_is_spoken_to_on_its_stdio_and_finished() {
    let script = r#"read line; echo '{"jsonrpc":"2.0","id":1,"result":{"pong":true}}'; echo 'not json'; echo 'oops' >&2; cat >/dev/null; exit 3"#;
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", script]);
    let mut client = McpClient::spawn(command, mcp_client::Stderr::Tail(5)).unwrap();
    assert!(client.pid().is_some());
    assert_eq!(client.call_method("ping", json!({})).await.unwrap()["result"]["pong"], true);
    client.finish(WAIT).await;
    assert_eq!(client.stray(), ["not json"]);
    assert_eq!(client.ended_within(WAIT).await, Some(Err("exit status: 3".into())));
    // stderr is drained on a task of its own: its line may come a moment later.
    let deadline = tokio::time::Instant::now() + WAIT;
    while client.stderr_tail().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(client.stderr_tail(), ["oops"]);
    assert!(matches!(client.send_line("{}").await, Err(e) if e.is_client_side()));
}

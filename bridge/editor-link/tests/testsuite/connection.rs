//! One connection, in memory and over TCP: frames both ways, framing
//! detected from the first byte, deliveries, a peer that does not read, and
//! the three endings.

use std::time::Duration;

use bytes::Bytes;
use editor_link::{
    connection::{Connection, Ending, Options, Outgoing, Received},
    framing::Framing,
    jsonrpc::{Message, Request},
};
use tokio::{
    io::AsyncReadExt,
    net::{TcpListener, TcpStream},
};

const WAIT: Duration = Duration::from_secs(10);

async fn recv(receiver: &mut editor_link::connection::Receiver) -> Received {
    tokio::time::timeout(WAIT, receiver.recv()).await.expect("a frame within the wait")
}

#[tokio::test]
async fn frames_go_both_ways_and_the_editor_side_answers_in_the_framing_it_detected() {
    for framing in [Framing::Header, Framing::Newline] {
        let (mut client, mut editor) = Connection::memory(framing, 1 << 20);
        let ping = Message::Request(Request::new(1u64, "ping", serde_json::json!({})));
        let delivery = client.sender.send_message(&ping, None);
        let Received::Body(body) = recv(&mut editor.receiver).await else { panic!("a body") };
        assert_eq!(Message::parse(&body).unwrap(), ping);
        assert!(delivery.reached() && delivery.withdraw(), "written whole: too late to take back");
        assert_eq!(editor.receiver.framing(), Some(framing));
        assert_eq!(editor.sender.framing(), framing, "the Editor writes what it detected");
        editor.sender.send(Outgoing::body(Bytes::from_static(b"{\"x\":1}")));
        let Received::Body(body) = recv(&mut client.receiver).await else { panic!("a body") };
        assert_eq!(&body[..], b"{\"x\":1}");
    }
}

#[tokio::test]
async fn a_closed_peer_and_a_broken_one_are_told_apart() {
    let (client, mut editor) = Connection::memory(Framing::Header, 1 << 20);
    client.sender.end(Ending::Graceful);
    drop(client.receiver);
    client.writer.await.unwrap();
    assert!(matches!(recv(&mut editor.receiver).await, Received::Closed));

    let (read, mut write) = tokio::io::duplex(1024);
    let mut editor = Connection::new(read, tokio::io::sink(), Options::editor(1 << 20));
    tokio::io::AsyncWriteExt::write_all(&mut write, b"Content-Length: lots\r\n\r\n").await.unwrap();
    assert!(matches!(recv(&mut editor.receiver).await, Received::Broken(_)));
}

#[tokio::test]
async fn a_body_withdrawn_before_it_is_written_never_leaves() {
    // A peer that never reads: the first writes fill the pipe, later bodies wait.
    let (read, write) = tokio::io::duplex(64);
    let client = Connection::new(tokio::io::empty(), write, Options::client(Framing::Header, 1 << 20));
    let big = Outgoing::body(Bytes::from(vec![b'x'; 4096]));
    let first = client.sender.send(big.clone());
    let second = client.sender.send(big);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(first.reached(), "being written");
    assert!(!second.withdraw(), "still queued: taken back, it never left");
    assert!(client.sender.queued_bytes() > 0);
    drop(read);
}

#[tokio::test]
async fn room_waits_until_what_is_queued_is_written() {
    let (mut read, write) = tokio::io::duplex(1024);
    let client = Connection::new(tokio::io::empty(), write, Options::client(Framing::Header, 1 << 20));
    for _ in 0..8 {
        client.sender.send(Outgoing::body(Bytes::from(vec![b'x'; 1024])));
    }
    assert!(tokio::time::timeout(Duration::from_millis(100), client.sender.room(1024)).await.is_err(), "nobody reads");
    let reader = tokio::spawn(async move {
        let mut sink = vec![0u8; 64 * 1024];
        while read.read(&mut sink).await.unwrap_or(0) > 0 {}
    });
    tokio::time::timeout(WAIT, client.sender.room(0)).await.expect("drained once read");
    drop(client);
    reader.abort();
}

async fn tcp_pair() -> (Connection, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (peer, accepted) = tokio::join!(TcpStream::connect(("127.0.0.1", port)), listener.accept());
    (Connection::tcp(accepted.unwrap().0, Options::editor(1 << 20)), peer.unwrap())
}

/// Reads until the stream ends: what arrived, and whether it ended in a reset.
async fn read_to_end(peer: &mut TcpStream) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(WAIT, peer.read(&mut buf)).await.expect("the end within the wait") {
            Ok(0) => return (got, false),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return (got, true),
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test]
async fn a_graceful_end_drains_a_close_does_not_and_a_reset_resets() {
    for (ending, drained, reset) in
        [(Ending::Graceful, true, false), (Ending::Close, false, false), (Ending::Reset, false, true)]
    {
        let (editor, mut peer) = tcp_pair().await;
        // Queued, then ended before the writer (on this thread) runs.
        editor.sender.send(Outgoing::body(Bytes::from_static(b"{\"bye\":1}")));
        editor.sender.end(ending);
        editor.writer.await.unwrap();
        drop(editor.receiver);
        let (got, was_reset) = read_to_end(&mut peer).await;
        assert_eq!(!got.is_empty(), drained, "{ending:?}: {:?}", String::from_utf8_lossy(&got));
        assert_eq!(was_reset, reset, "{ending:?}");
    }
}

#[tokio::test]
async fn frames_queued_together_go_out_together_each_whole_and_in_order() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let client = Connection::tcp(
        TcpStream::connect(("127.0.0.1", port)).await.unwrap(),
        Options::client(Framing::Header, 1 << 20),
    );
    let (stream, _) = listener.accept().await.unwrap();
    let mut editor = Connection::tcp(stream, Options::editor(1 << 20));
    // Queued in one go, while the writer waits for its turn: gathered.
    let deliveries: Vec<_> = (0..500)
        .map(|n| {
            client.sender.send(Outgoing::body(Bytes::from(format!("{{\"n\":{n},\"pad\":\"{}\"}}", "x".repeat(n)))))
        })
        .collect();
    for n in 0..500 {
        let Received::Body(body) = recv(&mut editor.receiver).await else { panic!("frame {n}") };
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["n"], n, "in order, each whole");
    }
    assert!(deliveries.iter().all(|d| d.reached()), "every one delivered once written");
    assert_eq!(client.sender.queued_bytes(), 0);
}

//! Robustness (§1, §2): what bad or many clients must not break.

use std::time::Duration;

use editor_link::framing::Framing;

use crate::editor_client::Probe;
use serde_json::json;
use tokio::{io::AsyncWriteExt, net::TcpStream};

use crate::{
    case::{Case, CheckFuture, CheckResult, Level, Needs, Requires, check},
    editor_client::connect_stream,
    ensure,
    finding::Finding,
    target::Session,
};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            id: "2.garbage-survived".into(),
            requirement: "64 KiB of random bytes on one connection end at most that connection: the Editor keeps serving others.".into(),
            reference: "docs/editor-link-protocol.md §2",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(garbage_survived),
        },
        Case {
            id: "2.vanish-mid-frame".into(),
            requirement: "A client that disconnects in the middle of a frame costs nothing but its connection: the Editor keeps serving.".into(),
            reference: "docs/editor-link-protocol.md §2",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(vanish_mid_frame),
        },
        Case {
            id: "1.connection-churn".into(),
            requirement: "150 connections opened, used once and closed, one after another, leave the Editor serving.".into(),
            reference: "docs/editor-link-protocol.md §1",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(connection_churn),
        },
        Case {
            id: "1.concurrent-clients".into(),
            requirement: "64 clients connected at once, each with two requests in flight, are each answered while all stay connected.".into(),
            reference: "docs/editor-link-protocol.md §1",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(concurrent_clients),
        },
        Case {
            id: "1.probe-connections".into(),
            requirement: "Probe connections that connect and close at once without a byte (100, some at the same time), and one that stays open and silent, do not keep the Editor from serving other clients.".into(),
            reference: "docs/editor-link-protocol.md §1",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(probe_connections),
        },
        Case {
            id: "1.reset-connections".into(),
            requirement: "50 connections reset by their client (SO_LINGER 0, then close), half of them mid-frame and some before the Editor has served them, cost only themselves: the Editor keeps accepting and serving.".into(),
            reference: "docs/editor-link-protocol.md §1",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(reset_connections),
        },
        Case {
            id: "1.non-reading-client".into(),
            requirement: "A client that sends requests and never reads their answers is held back (the Editor stops reading it, or closes it) before it has sent 64 MiB, and another client is answered meanwhile.".into(),
            reference: "docs/editor-link-protocol.md §1",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(non_reading_client),
        },
        Case {
            id: "1.held-connections".into(),
            requirement: "200 connections held open at once are each answered, and once they close the Editor goes on serving.".into(),
            reference: "docs/editor-link-protocol.md §1",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(held_connections),
        },
    ]
}

fn reset_connections(s: Session) -> CheckFuture {
    Box::pin(async move {
        // A reset (RST) is TCP's: an Editor on a Unix socket or pipe has no port to reset.
        let addr = s.editor_addr().await?;
        for n in 0..50 {
            let stream = TcpStream::connect(addr)
                .await
                .map_err(|e| Finding::Violation(format!("connection {n} of the 50 to reset was refused: {e}")))?;
            if n % 2 == 1 {
                let _ = stream.try_write(b"Content-Length: 60\r\n\r\n{\"jsonrpc\":\"2.0\",");
            }
            let _ = stream.set_zero_linger();
            drop(stream);
        }
        still_serving(&s).await
    })
}

/// How much a client that reads nothing may send before the Editor holds it
/// back: far above what the kernel's buffers on both ends take.
const UNREAD_LIMIT: usize = 64 << 20;

/// How long a write may make no progress before it counts as held back.
const HELD_BACK_AFTER: Duration = Duration::from_secs(3);

fn non_reading_client(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut flood = s.raw_stream().await?;
        // Answers as large as the requests: ping echoes its message; an
        // Editor probed with get-version (whose answer is a few hundred
        // bytes whatever it is sent) gets small requests, else 64 MiB of
        // them would bring it only a few MiB of answers to hold back.
        let message = match s.probe() {
            Probe::Ping => "x".repeat(4096),
            Probe::GetVersion => "x".into(),
        };
        let token = s.token();
        let (mut sent, mut requests, mut held_back) = (0usize, 0u64, false);
        while sent < UNREAD_LIMIT {
            let mut body = s.probe().request(requests, &message);
            if let Some(token) = &token {
                body[editor_link::jsonrpc::TOKEN_MEMBER] = json!(token);
            }
            let body = body.to_string();
            let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
            match tokio::time::timeout(HELD_BACK_AFTER, flood.write_all(frame.as_bytes())).await {
                Ok(Ok(())) => {
                    sent += frame.len();
                    requests += 1;
                }
                // Closed by the Editor, or blocked: either holds it back.
                Ok(Err(_)) | Err(_) => {
                    held_back = true;
                    break;
                }
            }
        }
        let mut other = s.link(Framing::Header).await?;
        other.probe_with("another client").await.map_err(|e| {
            e.into_violation(|why| format!("with a client not reading, another client's request failed: {why}"))
        })?;
        ensure!(
            held_back,
            "the Editor read {} MiB of requests ({requests}) from a client that read none of their answers: it queues answers without bound",
            sent >> 20
        );
        drop(flood);
        still_serving(&s).await
    })
}

fn held_connections(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut links = Vec::new();
        for n in 0..200 {
            links.push(
                s.link(Framing::Header)
                    .await
                    .map_err(|e| e.into_violation(|why| format!("connection {n} of 200 held failed: {why}")))?,
            );
        }
        for (n, link) in links.iter_mut().enumerate() {
            link.probe_with("held")
                .await
                .map_err(|e| e.into_violation(|why| format!("held connection {n} of 200 was not answered: {why}")))?;
        }
        drop(links);
        still_serving(&s).await
    })
}

async fn still_serving(s: &Session) -> CheckResult {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut fresh = s
        .link(Framing::Header)
        .await
        .map_err(|e| e.into_violation(|why| format!("the Editor no longer accepts connections: {why}")))?;
    fresh.probe_with("still there").await?;
    Ok(())
}

fn garbage_survived(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        // Deterministic noise that does not start with '{'.
        let mut x: u32 = 0x9E37_79B9;
        let noise: Vec<u8> = (0..64 * 1024)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if i == 0 { b'G' } else { x as u8 }
            })
            .collect();
        let _ = link.send_raw(&noise).await;
        let _ = link.closes_within(Duration::from_secs(2)).await;
        still_serving(&s).await
    })
}

fn vanish_mid_frame(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.send_raw(b"Content-Length: 200\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,").await?;
        drop(link);
        still_serving(&s).await
    })
}

fn connection_churn(s: Session) -> CheckFuture {
    Box::pin(async move {
        for n in 0..150 {
            let mut link = s
                .link(Framing::Header)
                .await
                .map_err(|e| e.into_violation(|why| format!("connection {n} of the churn failed: {why}")))?;
            link.probe_with("churn").await?;
        }
        still_serving(&s).await
    })
}

fn concurrent_clients(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut links = Vec::new();
        // Header framing and core tools only: what every Editor of the
        // protocol speaks (newline framing has its own cases).
        for _ in 0..64 {
            links.push(s.link(Framing::Header).await?);
        }
        for (n, link) in links.iter_mut().enumerate() {
            let probe = link.probe();
            link.send_json(&probe.request(n, "")).await?;
            link.send_json(&probe.request(format!("second-{n}"), &format!("client {n}"))).await?;
        }
        // Answered in any order of clients; every client keeps its connection.
        for (n, link) in links.iter_mut().enumerate().rev() {
            let mut waiting = vec![json!(n), json!(format!("second-{n}"))];
            while !waiting.is_empty() {
                let answer = link.message().await.map_err(|e| match e {
                    Finding::Violation(why) => Finding::Violation(format!("client {n}: {why}")),
                    other => other,
                })?;
                if answer.get("method").is_some() {
                    continue;
                }
                let Some(at) = waiting.iter().position(|id| answer.get("id") == Some(id)) else {
                    return crate::finding::violation(format!("client {n} got an answer meant for another: {answer}"));
                };
                waiting.remove(at);
                ensure!(answer.get("result").is_some(), "client {n} was answered {answer}");
            }
        }
        Ok(())
    })
}

fn probe_connections(s: Session) -> CheckFuture {
    Box::pin(async move {
        let endpoint = s.link(Framing::Header).await?.peer_endpoint().clone();
        // Connect and close at once, ten at a time.
        for _ in 0..10 {
            let probes: Vec<_> = (0..10).map(|_| connect_stream(&endpoint)).collect();
            for probe in futures_util::future::join_all(probes).await {
                drop(probe.map_err(|e| Finding::Violation(format!("a probe connection was refused: {e}")))?);
            }
        }
        // One stays open and silent, as a port scanner's does.
        let _silent = connect_stream(&endpoint)
            .await
            .map_err(|e| Finding::Violation(format!("a probe connection was refused: {e}")))?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        still_serving(&s)
            .await
            .map_err(|e| e.into_violation(|why| format!("with a silent probe connection open: {why}")))
    })
}

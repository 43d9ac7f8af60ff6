//! §2 framing as properties, run against the live target: random sequences
//! of valid requests, in either framing, written in random chunks no larger
//! than a bound (1, 10, 64, 512, 1024 bytes), are each answered exactly.
//! proptest generates and shrinks; a failure reports the smallest input
//! found. The generator is seeded, so a run is repeatable.

use std::time::Duration;

use editor_link::framing::{Framing, frame_bytes};
use proptest::{
    prelude::*,
    strategy::ValueTree,
    test_runner::{Config, RngAlgorithm, TestRng, TestRunner},
};

use crate::{
    case::{Case, CheckResult, Level, Needs, Requires, check},
    finding::Finding,
    target::Session,
};

/// Inputs tried per case (each on its own connection); byte-at-a-time
/// inputs are slow to send, so fewer of them.
const CASES: u32 = 24;
const CASES_BYTE_AT_A_TIME: u32 = 8;

/// How long a missing answer is waited for.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// Shrinking stops after this long (each failing try waits out a silence).
const SHRINK_FOR: Duration = Duration::from_secs(8);

/// One generated input: messages to echo, how the bytes are cut.
#[derive(Clone, Debug)]
struct Input {
    messages: Vec<String>,
    chunks: Vec<usize>,
}

fn input(bound: usize) -> impl Strategy<Value = Input> {
    // Any text, multi-byte characters included (no control characters: they
    // are escaped in JSON anyway, and keep reports readable).
    let message = "[a-zA-Z0-9 éü日本語☃𝄞{}\\[\\]\"\\\\:,]{0,40}";
    (prop::collection::vec(message, 1..6), prop::collection::vec(1..=bound, 1..64))
        .prop_map(|(messages, chunks)| Input { messages, chunks })
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for framing in [Framing::Header, Framing::Newline] {
        for bound in [1usize, 10, 64, 512, 1024] {
            cases.push(Case {
                id: format!("2.property.{framing}-chunks-{bound}").into(),
                requirement: format!(
                    "Random sequences of 1 to 5 requests in {framing} framing, written in random chunks of 1 to {bound} bytes, are each answered with their own id and the exact text sent (seeded inputs, shrunk on failure)."
                )
                .into(),
                reference: "docs/editor-link-protocol.md §2",
                level: Level::Must,
                needs: Needs::Link,
                requires: match framing {
                    Framing::Header => Requires::CORE,
                    Framing::Newline => Requires::extension(crate::case::Extension::NewlineFraming),
                },
                check: check(move |s| Box::pin(property(s, framing, bound))),
            });
        }
    }
    cases
}

/// Sends `input` on a fresh connection; why it was not answered as it must be.
async fn try_input(s: &Session, framing: Framing, input: &Input) -> Result<Option<String>, Finding> {
    let mut link = s.link(framing).await?;
    let mut bytes = Vec::new();
    for (n, message) in input.messages.iter().enumerate() {
        let body = link.probe().request(format!("p-{n}"), message);
        bytes.extend_from_slice(
            &frame_bytes(framing, &link.signed(body.to_string().as_bytes()))
                .map_err(|e| Finding::Harness(e.to_string()))?,
        );
    }
    let mut at = 0;
    for size in input.chunks.iter().cycle() {
        if at >= bytes.len() {
            break;
        }
        let end = (at + size).min(bytes.len());
        link.send_raw(&bytes[at..end]).await?;
        at = end;
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    // Answers may come in any order (requests run concurrently).
    let mut waiting: Vec<(String, &String)> =
        input.messages.iter().enumerate().map(|(n, m)| (format!("p-{n}"), m)).collect();
    while !waiting.is_empty() {
        let answer = match link.receive(ANSWER_WAIT).await {
            crate::editor_client::Read::Message(answer) => answer,
            other => return Ok(Some(format!("{other:?} with {} answers missing", waiting.len()))),
        };
        if answer.get("method").is_some() {
            continue;
        }
        let Some(at) = waiting.iter().position(|(id, _)| answer["id"] == id.as_str()) else {
            return Ok(Some(format!("an answer to no request still waiting: {answer}")));
        };
        let (id, message) = waiting.remove(at);
        if let Err(e) = link.probe().check(&answer, message) {
            return Ok(Some(format!("request {id}: {}", e.detail())));
        }
    }
    Ok(None)
}

/// Why an input failed, or `None`.
type Verdict = Result<Option<String>, Finding>;

/// proptest's value trees are not `Send`: generation and shrinking run on a
/// blocking thread, which hands each input to this task to try on the wire.
async fn property(s: Session, framing: Framing, bound: usize) -> CheckResult {
    let (to_wire, mut inputs) = tokio::sync::mpsc::channel::<(Input, tokio::sync::oneshot::Sender<Verdict>)>(1);
    let driver = tokio::task::spawn_blocking(move || -> Result<Option<(String, Input)>, Finding> {
        let gone = || Finding::Harness("the property's driver lost the wire".into());
        let try_it = |input: Input| -> Verdict {
            let (reply, verdict) = tokio::sync::oneshot::channel();
            to_wire.blocking_send((input, reply)).map_err(|_| gone())?;
            verdict.blocking_recv().map_err(|_| gone())?
        };
        let cases = if bound == 1 { CASES_BYTE_AT_A_TIME } else { CASES };
        let config = Config { cases, ..Config::default() };
        let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
        let strategy = input(bound);
        for _ in 0..cases {
            let mut tree = strategy.new_tree(&mut runner).map_err(|e| Finding::Harness(e.to_string()))?;
            let Some(mut why) = try_it(tree.current())? else { continue };
            // Shrink: keep the simplest input that still fails.
            let mut smallest = tree.current();
            let began = std::time::Instant::now();
            while began.elapsed() < SHRINK_FOR {
                if !tree.simplify() {
                    break;
                }
                match try_it(tree.current())? {
                    Some(failure) => (smallest, why) = (tree.current(), failure),
                    None if !tree.complicate() => break,
                    None => {}
                }
            }
            return Ok(Some((why, smallest)));
        }
        Ok(None)
    });
    while let Some((input, reply)) = inputs.recv().await {
        let _ = reply.send(try_input(&s, framing, &input).await);
    }
    match driver.await.map_err(|e| Finding::Harness(format!("the property's driver failed: {e}")))?? {
        None => Ok(()),
        Some((why, smallest)) => crate::finding::violation(format!(
            "{why} — smallest failing input: messages {:?}, chunk sizes {:?}",
            smallest.messages, smallest.chunks
        )),
    }
}

//! The hostile-snippet corpus (`fixtures/hostile-snippets.json`): snippets
//! of execute-dynamic-code written as a hostile user would, each with what a
//! security level must do with it — refuse it before it runs, bound it while
//! it runs, or run it — sent over the editor link to an Editor (the
//! package's host under mono in the tests) with its level set through the
//! control API. After each snippet the Editor must still answer a call that
//! needs its main thread: a snippet that froze or crashed it fails whatever
//! was expected.

use std::time::{Duration, Instant};

use editor_link::framing::Framing;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{editor_client::Read, finding::Finding, target::Session};

/// The corpus file, in the repository.
pub fn corpus_path() -> std::path::PathBuf {
    crate::home::repository().join("fixtures/hostile-snippets.json")
}

#[derive(Debug, Clone, Deserialize)]
pub struct Corpus {
    pub snippets: Vec<Snippet>,
}

impl Corpus {
    pub fn load() -> Result<Corpus, String> {
        let path = corpus_path();
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snippet {
    pub name: String,
    pub attack: String,
    pub code: String,
    /// What Restricted must do with it (none: not run at that level).
    pub restricted: Option<Outcome>,
    /// What FullAccess must do with it (none: not run there, as it would
    /// hold or end the Editor, which FullAccess allows; docs/dynamic-code.md).
    pub full_access: Option<Outcome>,
    /// Compiled against Unity's API (the host's --snippet-reference), not run.
    #[serde(default)]
    pub unity: bool,
    /// Its TimeoutSeconds (default 3).
    pub timeout: Option<f64>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Refused before it ran ("Security violation").
    Refused,
    /// Stopped by its budgets (deadline, steps, nesting, allocations) or by
    /// a library bound (a regular expression's match timeout).
    Bounded,
    /// Ran (to a result, or to an exception of its own).
    Runs,
    /// The C# compiler refused it.
    NotCompiled,
}

/// What happened to a snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    As(Outcome),
    /// Answered, but the Editor's main thread did not come back.
    Froze(String),
    /// The Editor went away.
    Crashed(String),
    /// An answer none of the outcomes is.
    Unclear(String),
}

/// One snippet at one level.
#[derive(Debug, Clone)]
pub struct Run {
    pub name: String,
    pub expected: Outcome,
    pub observed: Observed,
    pub seconds: f64,
    pub answer: String,
}

/// The security level's name as the control API takes it.
pub fn level_name(full_access: bool) -> &'static str {
    if full_access { "FullAccess" } else { "Restricted" }
}

/// Sets the Editor's dynamic-code security level.
pub async fn set_level(session: &Session, full_access: bool) -> Result<(), String> {
    let control = session.control().map_err(|e| format!("{e:?}"))?;
    control
        .post("/settings", json!({"dynamicCodeSecurityLevel": level_name(full_access)}))
        .await
        .map(|_| ())
        .map_err(|e| format!("setting the security level: {e}"))
}

/// Sends one snippet and classifies the answer; then checks the Editor's
/// main thread still answers.
pub async fn run_one(session: &Session, snippet: &Snippet, expected: Outcome) -> Run {
    let mut timeout = snippet.timeout.unwrap_or(3.0);
    let mut started = Instant::now();
    let mut attempts = 1;
    let (observed, answer) = loop {
        let params = json!({"Code": snippet.code, "CompileOnly": snippet.unity, "TimeoutSeconds": timeout});
        match call(session, "execute-dynamic-code", params, Duration::from_secs_f64(timeout + 60.0)).await {
            Err(e) => break (Observed::Crashed(e.to_string()), e.to_string()),
            // The machine, not the snippet, used up the call's time: that
            // says nothing about the snippet, so it is sent again with more
            // time, the run timed afresh.
            Ok(response) if slow_machine(&response, expected) && attempts < ATTEMPTS => {
                attempts += 1;
                timeout *= 4.0;
                started = Instant::now();
            }
            Ok(response) => break (classify(&response), response.to_string()),
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let observed = match observed {
        Observed::Crashed(_) => observed,
        other => match alive(session).await {
            Ok(()) => other,
            Err(Observed::Crashed(e)) => Observed::Crashed(e),
            Err(froze) => froze,
        },
    };
    Run { name: snippet.name.clone(), expected, observed, seconds, answer }
}

/// Why a call got no answer.
#[derive(Debug)]
enum NoAnswer {
    /// No connection could be had: the Editor is gone.
    Connect(Finding),
    /// The request could not be written.
    Send(Finding),
    /// Nothing came back within this long.
    Silence(Duration),
    /// The Editor closed the connection.
    Closed,
    /// What came back was not a message.
    Broken(String),
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoAnswer::Connect(e) => write!(f, "cannot connect: {e:?}"),
            NoAnswer::Send(e) => write!(f, "cannot send: {e:?}"),
            NoAnswer::Silence(wait) => write!(f, "no answer within {wait:?}"),
            NoAnswer::Closed => f.write_str("the Editor closed the connection"),
            NoAnswer::Broken(e) => f.write_str(e),
        }
    }
}

/// One call on a fresh connection, waiting up to `wait` for its answer.
async fn call(session: &Session, method: &str, params: Value, wait: Duration) -> Result<Value, NoAnswer> {
    let mut link = session.link(Framing::Header).await.map_err(NoAnswer::Connect)?;
    let id = link.request(method, params).await.map_err(NoAnswer::Send)?;
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match link.receive(left).await {
            Read::Message(m) if m.get("id") == Some(&id) => return Ok(m),
            Read::Message(_) => continue,
            Read::Silence => return Err(NoAnswer::Silence(wait)),
            Read::Closed => return Err(NoAnswer::Closed),
            Read::NotJson(e) | Read::BadFraming(e) => return Err(NoAnswer::Broken(e)),
        }
    }
}

/// Whether the Editor's main thread still answers (a tool that needs it).
async fn alive(session: &Session) -> Result<(), Observed> {
    match call(session, "get-hierarchy", json!({"MaxDepth": 0, "TimeoutSeconds": 10}), Duration::from_secs(20)).await {
        Ok(response) if response.get("result").is_some() => Ok(()),
        Ok(response) => Err(Observed::Froze(format!("afterwards get-hierarchy answered {response}"))),
        Err(e @ NoAnswer::Connect(_)) => Err(Observed::Crashed(e.to_string())),
        Err(e) => Err(Observed::Froze(format!("afterwards get-hierarchy: {e}"))),
    }
}

/// How often a snippet is sent when a slow machine, not the snippet, ran
/// out of the call's time (each time with four times the time).
const ATTEMPTS: u32 = 3;

/// Whether the call's time ran out for a reason that is the machine's: the
/// C# compiler had not finished (`DynamicCodeTool`: "the C# compiler did not
/// finish …, so it was not run"), a snippet that runs to its end was
/// stopped at the deadline, or the dispatcher answered the deadline while
/// the snippet was between two checks of its guard. A snippet bounded by
/// its steps, nesting or allocations is stopped as surely with more time;
/// one the guard cannot stop times out again, and then fails.
fn slow_machine(response: &Value, expected: Outcome) -> bool {
    let error = &response["error"];
    let message = error["data"]["message"].as_str().or(error["message"].as_str()).unwrap_or_default();
    error["data"]["type"] == "timeout"
        && (message.contains("the C# compiler did not finish")
            || (expected == Outcome::Runs && message.starts_with("the snippet was stopped at its deadline"))
            // The call's deadline passed while the snippet was inside one
            // long library call (a huge array copied as a list grows),
            // between two of the guard's checks; or, for one that must be
            // refused, before the compile and the audit were done (seen
            // under CI's load). Sent again with more time, a snippet that
            // really runs on times out again and is reported.
            || message.starts_with("Tool 'execute-dynamic-code' timed out"))
}

fn classify(response: &Value) -> Observed {
    if let Some(error) = response.get("error") {
        let message = error["data"]["message"].as_str().or(error["message"].as_str()).unwrap_or_default();
        let kind = error["data"]["type"].as_str().unwrap_or_default();
        // The snippet's own stop at its deadline; a bare "timed out" is the
        // dispatcher's, answered while something still held the main thread.
        if kind == "timeout" && message.starts_with("the snippet was stopped") {
            return Observed::As(Outcome::Bounded);
        }
        return Observed::Unclear(format!("error {kind}: {message}"));
    }
    let result = &response["result"];
    if result["Success"] == true {
        return Observed::As(Outcome::Runs);
    }
    let message = result["ErrorMessage"].as_str().unwrap_or_default();
    if message.starts_with("Security violation") {
        Observed::As(Outcome::Refused)
    } else if message.starts_with("Compilation failed") {
        Observed::As(Outcome::NotCompiled)
    } else if message.starts_with("the snippet was stopped") || message.starts_with("RegexMatchTimeoutException") {
        Observed::As(Outcome::Bounded)
    } else if message.is_empty() {
        Observed::Unclear(format!("neither a result nor an error message: {result}"))
    } else {
        // It ran, and threw.
        Observed::As(Outcome::Runs)
    }
}

/// Counts per outcome, as the closing table shows them.
pub fn counts(runs: &[Run]) -> String {
    let count = |o: Outcome| runs.iter().filter(|r| r.observed == Observed::As(o)).count();
    let froze = runs.iter().filter(|r| matches!(r.observed, Observed::Froze(_))).count();
    let crashed = runs.iter().filter(|r| matches!(r.observed, Observed::Crashed(_))).count();
    let unclear = runs.iter().filter(|r| matches!(r.observed, Observed::Unclear(_))).count();
    format!(
        "{} snippets: {} refused, {} bounded, {} ran, {} not compiled, {froze} froze the Editor, {crashed} crashed it, {unclear} unclear",
        runs.len(),
        count(Outcome::Refused),
        count(Outcome::Bounded),
        count(Outcome::Runs),
        count(Outcome::NotCompiled)
    )
}

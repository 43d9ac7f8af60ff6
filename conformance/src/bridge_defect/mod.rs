//! A deliberately broken bridge, so that every `mcp` case can be shown
//! failing: `unity-conformance bridge --defect NAME` runs the embedded bridge
//! as a child and relays its stdio line by line ([`relay`]), breaking one
//! MCP rule on the way (what `fake-unity --defect` is for the Editor side).
//!
//! One file per defect, each a [`Breaks`]: what it does to the client's
//! messages, to the bridge's, or at the start and the end, as
//! fake-unity's faults are one file each behind one trait.

mod accepts_any_cursor;
mod alters_results;
mod answers_cancelled;
mod answers_removed_methods;
mod answers_undeclared_methods;
mod banner;
mod dies_on_bad_json;
mod dies_on_early_notification;
mod early_list_changed;
mod fails_on_huge_timeout;
mod gives_up;
mod guesses_the_editor;
mod hides_a_tool;
mod hides_what_blocks;
mod ids_as_strings;
mod ignores_batches;
mod ignores_cancellation;
mod ignores_discover;
mod ignores_eof;
mod ignores_open_editors;
mod ignores_ping;
mod images_as_text;
mod invalid_schema;
mod loses_answers;
mod misses_deadlines;
mod no_is_error;
mod no_list_changed;
mod no_list_changed_capability;
mod no_progress;
mod no_reload_wait;
mod no_result_type;
mod no_structured_content;
mod no_subscriptions;
mod null_requested;
mod one_call_at_a_time;
mod pins_version;
mod progress_unasked;
mod rejects_unknown_version;
mod relay;
mod requires_every_parameter;
mod requires_handshake;
mod resends_what_may_have_run;
mod runs_duplicate_ids;
mod says_did_not_run;
mod takes_the_editor;
mod tells_cancelled_subscriptions;
mod unknown_tool_as_result;
mod waits_for_absent_editor;
mod wrong_output_schema;

use std::{sync::Arc, time::Duration};

use serde_json::Value;

pub use relay::{Relay, relay};

/// One MCP rule broken on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum BridgeDefect {
    /// Prints a banner on stdout before serving.
    Banner,
    /// Answers every `initialize` with protocol version 2024-11-05.
    PinsVersion,
    /// Answers `initialize` with an error when the version is not one it knows.
    RejectsUnknownVersion,
    /// Does not declare `tools.listChanged`.
    NoListChangedCapability,
    /// Exits at a notification that comes before `initialize`.
    DiesOnEarlyNotification,
    /// Echoes integer ids as strings.
    IdsAsStrings,
    /// Exits at a line that is not JSON.
    DiesOnBadJson,
    /// Never answers a batch.
    IgnoresBatches,
    /// Never answers `ping`.
    IgnoresPing,
    /// Never answers `server/discover`.
    IgnoresDiscover,
    /// Advertises a tool whose input schema is not a valid JSON Schema.
    InvalidSchema,
    /// Leaves the last of the Editor's tools out of `tools/list`.
    HidesATool,
    /// Answers `tools/list` with an invalid cursor as if it were the end.
    AcceptsAnyCursor,
    /// Marks every parameter of every tool required.
    RequiresEveryParameter,
    /// Changes what Unity answered: a suffix on every description, text
    /// and error message.
    AltersResults,
    /// Leaves `structuredContent` out of tool results.
    NoStructuredContent,
    /// Leaves `isError` out of failed tool results.
    NoIsError,
    /// Answers an unknown tool with a tool result, not a JSON-RPC error.
    UnknownToolAsResult,
    /// Sends images as text.
    ImagesAsText,
    /// Never forwards `notifications/tools/list_changed`.
    NoListChanged,
    /// Sends `notifications/tools/list_changed` before `initialized`.
    EarlyListChanged,
    /// Never sends `notifications/progress`.
    NoProgress,
    /// Sends `notifications/progress` for calls that did not ask for it.
    ProgressUnasked,
    /// Answers a request the client cancelled.
    AnswersCancelled,
    /// Loses the answer of every other tool call (the first, third …).
    LosesAnswers,
    /// Answers every tool call with an error ("Unity is not reachable")
    /// instead of its result, as a bridge that gives up instead of waiting
    /// through a reload or a fault would.
    GivesUp,
    /// Takes the Editor for itself from the start: a second bridge for the
    /// same project refuses to run while the first lives, initialized or not.
    TakesTheEditor,
    /// Keeps running after stdin closes.
    IgnoresEof,
    /// Sends a tool call again when its error says it may have run (as a
    /// bridge that retries after an Editor crash would: it runs twice).
    ResendsWhatMayHaveRun,
    /// Says a call did not run when the bridge said it may have run.
    SaysDidNotRun,
    /// Answers every failed tool call 30 s late (a bridge that waits for
    /// something besides the call's deadline).
    MissesDeadlines,
    /// Runs a second request with the id of one in flight, and answers only
    /// one of them.
    RunsDuplicateIds,
    /// Answers methods of capabilities it does not declare (resources,
    /// prompts, completions, logging) with empty results, and an unknown
    /// method with -32602.
    AnswersUndeclaredMethods,
    /// Fails with a JSON-RPC error (a panicked task) on a TimeoutSeconds of
    /// 1e18 or more.
    FailsOnHugeTimeout,
    /// Serves only after `initialize`: a 2026-07-28 request before it gets
    /// -32600 "before initialize" (the bridge before it spoke 2026-07-28).
    RequiresHandshake,
    /// Says `"requested": null` in its -32022 refusal.
    NullRequested,
    /// Answers the methods 2026-07-28 removed (ping, logging/setLevel) in
    /// that revision as if they were still there.
    AnswersRemovedMethods,
    /// Leaves `resultType` out of its results.
    NoResultType,
    /// Answers `subscriptions/listen` with -32601 (the bridge before it
    /// served 2026-07-28's list changes).
    NoSubscriptions,
    /// Still sends `notifications/tools/list_changed` on a subscription the
    /// client cancelled.
    TellsCancelledSubscriptions,
    /// Sends one tool call at a time to the Editor: a call waits until the
    /// one before it is answered (a bridge with one connection to an Editor
    /// that answers in order).
    OneCallAtATime,
    /// Never lets go of a call the client cancelled: it keeps waiting for
    /// the Editor's answer, and relays it.
    IgnoresCancellation,
    /// Answers a compile before the domain reload it causes is over (as if
    /// the client had not asked for `WaitForDomainReload`).
    NoReloadWait,
    /// Says nothing of what holds the Editor's main thread (a bridge that
    /// does not ask `get-editor-state`): progress and answers cut before it.
    HidesWhatBlocks,
    /// Declares every output member a string in tools' `outputSchema`s.
    WrongOutputSchema,
    /// Outside every project, takes the first open Editor of the registry
    /// for its project, however many are open: a guess.
    GuessesTheEditor,
    /// Looks for the Editor only in its project: outside every project it
    /// finds none, though Editors are open.
    IgnoresOpenEditors,
    /// Answers a failed tool call at the call's deadline, not at once: a
    /// bridge that waits for an Editor it has seen is not there.
    WaitsForAbsentEditor,
}

impl BridgeDefect {
    pub fn all() -> Vec<BridgeDefect> {
        <BridgeDefect as clap::ValueEnum>::value_variants().to_vec()
    }

    /// What it does.
    pub fn breaks(self) -> Arc<dyn Breaks> {
        match self {
            BridgeDefect::Banner => Arc::new(banner::Banner),
            BridgeDefect::PinsVersion => Arc::new(pins_version::PinsVersion),
            BridgeDefect::RejectsUnknownVersion => Arc::new(rejects_unknown_version::RejectsUnknownVersion),
            BridgeDefect::NoListChangedCapability => Arc::new(no_list_changed_capability::NoListChangedCapability),
            BridgeDefect::DiesOnEarlyNotification => Arc::new(dies_on_early_notification::DiesOnEarlyNotification),
            BridgeDefect::IdsAsStrings => Arc::new(ids_as_strings::IdsAsStrings),
            BridgeDefect::DiesOnBadJson => Arc::new(dies_on_bad_json::DiesOnBadJson),
            BridgeDefect::IgnoresBatches => Arc::new(ignores_batches::IgnoresBatches),
            BridgeDefect::IgnoresPing => Arc::new(ignores_ping::IgnoresPing),
            BridgeDefect::IgnoresDiscover => Arc::new(ignores_discover::IgnoresDiscover),
            BridgeDefect::InvalidSchema => Arc::new(invalid_schema::InvalidSchema),
            BridgeDefect::HidesATool => Arc::new(hides_a_tool::HidesATool),
            BridgeDefect::AcceptsAnyCursor => Arc::new(accepts_any_cursor::AcceptsAnyCursor),
            BridgeDefect::RequiresEveryParameter => Arc::new(requires_every_parameter::RequiresEveryParameter),
            BridgeDefect::AltersResults => Arc::new(alters_results::AltersResults),
            BridgeDefect::NoStructuredContent => Arc::new(no_structured_content::NoStructuredContent),
            BridgeDefect::NoIsError => Arc::new(no_is_error::NoIsError),
            BridgeDefect::UnknownToolAsResult => Arc::new(unknown_tool_as_result::UnknownToolAsResult),
            BridgeDefect::ImagesAsText => Arc::new(images_as_text::ImagesAsText),
            BridgeDefect::NoListChanged => Arc::new(no_list_changed::NoListChanged),
            BridgeDefect::EarlyListChanged => Arc::new(early_list_changed::EarlyListChanged),
            BridgeDefect::NoProgress => Arc::new(no_progress::NoProgress),
            BridgeDefect::ProgressUnasked => Arc::new(progress_unasked::ProgressUnasked::default()),
            BridgeDefect::AnswersCancelled => Arc::new(answers_cancelled::AnswersCancelled),
            BridgeDefect::LosesAnswers => Arc::new(loses_answers::LosesAnswers::default()),
            BridgeDefect::GivesUp => Arc::new(gives_up::GivesUp),
            BridgeDefect::TakesTheEditor => Arc::new(takes_the_editor::TakesTheEditor::default()),
            BridgeDefect::IgnoresEof => Arc::new(ignores_eof::IgnoresEof),
            BridgeDefect::ResendsWhatMayHaveRun => Arc::new(resends_what_may_have_run::ResendsWhatMayHaveRun),
            BridgeDefect::SaysDidNotRun => Arc::new(says_did_not_run::SaysDidNotRun),
            BridgeDefect::MissesDeadlines => Arc::new(misses_deadlines::MissesDeadlines),
            BridgeDefect::RunsDuplicateIds => Arc::new(runs_duplicate_ids::RunsDuplicateIds),
            BridgeDefect::AnswersUndeclaredMethods => Arc::new(answers_undeclared_methods::AnswersUndeclaredMethods),
            BridgeDefect::FailsOnHugeTimeout => Arc::new(fails_on_huge_timeout::FailsOnHugeTimeout),
            BridgeDefect::RequiresHandshake => Arc::new(requires_handshake::RequiresHandshake),
            BridgeDefect::NullRequested => Arc::new(null_requested::NullRequested),
            BridgeDefect::AnswersRemovedMethods => Arc::new(answers_removed_methods::AnswersRemovedMethods),
            BridgeDefect::NoResultType => Arc::new(no_result_type::NoResultType),
            BridgeDefect::NoSubscriptions => Arc::new(no_subscriptions::NoSubscriptions),
            BridgeDefect::TellsCancelledSubscriptions => {
                Arc::new(tells_cancelled_subscriptions::TellsCancelledSubscriptions)
            }
            BridgeDefect::OneCallAtATime => Arc::new(one_call_at_a_time::OneCallAtATime::default()),
            BridgeDefect::IgnoresCancellation => Arc::new(ignores_cancellation::IgnoresCancellation),
            BridgeDefect::NoReloadWait => Arc::new(no_reload_wait::NoReloadWait),
            BridgeDefect::HidesWhatBlocks => Arc::new(hides_what_blocks::HidesWhatBlocks),
            BridgeDefect::WrongOutputSchema => Arc::new(wrong_output_schema::WrongOutputSchema),
            BridgeDefect::GuessesTheEditor => Arc::new(guesses_the_editor::GuessesTheEditor),
            BridgeDefect::IgnoresOpenEditors => Arc::new(ignores_open_editors::IgnoresOpenEditors),
            BridgeDefect::WaitsForAbsentEditor => Arc::new(waits_for_absent_editor::WaitsForAbsentEditor),
        }
    }
}

impl std::fmt::Display for BridgeDefect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = clap::ValueEnum::to_possible_value(self).ok_or(std::fmt::Error)?;
        f.write_str(value.get_name())
    }
}

/// How late `MissesDeadlines` answers: as a bridge that waits for a
/// reconnect or a retry would (5 to 60 s), and more than any stall a
/// deadline check forgives (`stall_meter::MOST_ALLOWED`).
pub const MISSED_BY: Duration = Duration::from_secs(30);

/// One MCP rule broken on purpose: what the relay does differently at the
/// places a defect may act. Each method's default is the faithful relay's.
pub trait Breaks: Send + Sync {
    /// Before the bridge serves (a banner, the Editor taken). `Err`: the
    /// relay does not run, and says why.
    fn start(&self, relay: &Relay) -> Result<(), String> {
        let _ = relay;
        Ok(())
    }

    /// The bridge's command, before it starts (`args`: what it is given).
    fn bridge_command(&self, command: &mut tokio::process::Command, args: &[std::ffi::OsString]) {
        let _ = (command, args);
    }

    /// A line from the client that is not JSON.
    fn not_json(&self) -> Flow {
        Flow::Pass
    }

    /// A message from the client, which the defect may change in place.
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        let _ = (message, client, relay);
        Flow::Pass
    }

    /// A message from the bridge, which the defect may change in place.
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, relay: &Relay) -> Flow {
        let _ = (message, answering, relay);
        Flow::Pass
    }

    /// The client closed its input: true keeps the relay (and so the
    /// bridge) running.
    fn outlives_input(&self) -> bool {
        false
    }
}

/// What becomes of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// On its way, as the defect left it.
    Pass,
    /// Not relayed: dropped, or answered by the defect itself.
    Stop,
    /// A request from the client kept for later (the defect sends it on):
    /// in flight, not sent yet.
    Hold,
    /// The relay exits with this status (a bridge that dies).
    Exit(i32),
}

/// A message from the client, as the relay read it.
#[derive(Debug)]
pub struct FromClient<'a> {
    /// Its method (empty: a response, a batch).
    pub method: &'a str,
    pub id: Option<Value>,
    /// It names its revision in `_meta` (2026-07-28).
    pub stateless: bool,
    /// An `initialize` came, this one included.
    pub initialized: bool,
}

/// The client's request a message of the bridge answers.
#[derive(Debug)]
pub struct Answering<'a> {
    /// Its method; empty when the message answers none (a notification).
    pub method: &'a str,
    pub request: Option<&'a Value>,
}

/// `message` is a notification called `method`.
fn is_notification(message: &Value, method: &str) -> bool {
    message.get("method").and_then(Value::as_str) == Some(method)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A defect breaks what it says, and nothing else: a message it has no
    /// business with keeps its members (an error answer grows no `result`,
    /// which would make it an answer no client reads).
    #[tokio::test]
    async fn a_defect_adds_no_member_to_a_message_it_does_not_break() {
        let error = json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "boom"}});
        let result = json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "ok"}]}});
        let (relay, _said) = relay::for_tests();
        for defect in BridgeDefect::all() {
            for method in ["tools/call", "tools/list", "initialize", "ping"] {
                let answering = Answering { method, request: None };
                // These replace an error answer with a result, as they say.
                let replaces = matches!(
                    defect,
                    BridgeDefect::UnknownToolAsResult | BridgeDefect::AcceptsAnyCursor | BridgeDefect::GivesUp
                );
                let mut message = error.clone();
                if defect.breaks().bridge_message(&mut message, &answering, &relay) == Flow::Pass {
                    assert!(replaces || message.get("result").is_none(), "{defect} {method}: {message}");
                }
                let mut message = result.clone();
                if defect.breaks().bridge_message(&mut message, &answering, &relay) == Flow::Pass {
                    assert!(message.get("error").is_none(), "{defect} {method}: {message}");
                }
            }
        }
    }

    #[test]
    fn a_request_in_flight_again_runs_under_an_id_whose_answer_goes_nowhere() {
        let (relay, _said) = relay::for_tests();
        let breaks = BridgeDefect::RunsDuplicateIds.breaks();
        let client = FromClient { method: "tools/call", id: Some(json!(1)), stateless: false, initialized: true };
        let mut first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
        assert_eq!(breaks.client_message(&mut first, &client, &relay), Flow::Pass);
        assert_eq!(first["id"], 1, "not in flight yet: as it is");
        relay.note(&first);
        let mut second = first.clone();
        assert_eq!(breaks.client_message(&mut second, &client, &relay), Flow::Pass);
        assert_eq!(second["id"], "relay-dup-1");
        relay.note(&second);
        assert!(relay.answered(&mut json!({"id": "relay-dup-1", "result": {}})).is_none());
    }
}

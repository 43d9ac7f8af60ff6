//! Deliberate protocol defects (`fake-unity serve --defect NAME`): each breaks
//! exactly one rule of `docs/editor-link-protocol.md`, so the conformance suite can
//! prove that the check for that rule fails when the rule is broken.

use std::{fmt, str::FromStr};

/// One deliberately broken rule (its doc comment is its description in
/// `fake-unity defects`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Defect {
    /// §3: numeric ids are echoed as strings.
    IdsAsStrings,
    /// §3: numeric ids are read as floating-point numbers: a big integer
    /// comes back rounded, `-0` as `-0.0`.
    IdsAsFloats,
    /// §3: results lack `Ver`.
    NoVer,
    /// §3: notifications get an answer.
    AnswersNotifications,
    /// §3: a batch gets no answer.
    IgnoresBatches,
    /// §3: an unknown tool is answered with `-32602`.
    UnknownToolWrongCode,
    /// §3: parameters of the wrong type are silently replaced by defaults.
    AcceptsWrongTypes,
    /// §2: newline framing is refused with a framing error.
    NoNewlineFraming,
    /// §2: invalid JSON closes the connection.
    ParseErrorCloses,
    /// §2: an over-limit frame closes the connection (uLoopMCP's behaviour).
    OversizeCloses,
    /// §4, §5: a reload or a quit closes connections without the shutdown notification.
    NoShutdownNotification,
    /// §5: the session id survives reloads.
    SameSessionAfterReload,
    /// §5: no `list_changed` once tools are registered after a reload.
    NoListChangedAfterReload,
    /// §7: after a port move the discovery file keeps the old port.
    StaleDiscoveryPort,
    /// §6: internal tools are listed without `IncludeDevelopmentOnly`.
    ListsInternalTools,
    /// §6: enum defaults are sent as integers (uLoopMCP's shape).
    IntegerEnumDefaults,
    /// §2: replies go out in newline framing whatever the client speaks.
    WrongReplyFraming,
    /// §2: only the first frame of each read is decoded; the rest is lost.
    OneFramePerRead,
    /// §2: a frame split across reads is dropped.
    NoPartialFrames,
    /// §2: after a framing error the connection is left open.
    FramingErrorKeepsOpen,
    /// §6: `get-tool-details` calls every parameter a string.
    SchemaTypesAsStrings,
    /// §6: none of the extensions, as uLoopMCP: no `ProtocolVersion` or
    /// `Capabilities` in `get-version`, no tool annotations or timeouts.
    NoExtensions,
    /// §2: the header block must be exactly `Content-Length: N`: another case of the name, other headers or other spacing is a framing error.
    StrictHeaders,
    /// §2: Content-Length is counted in characters, not bytes.
    LengthInCharacters,
    /// §3: parameter names are matched case-sensitively, and `null` params are refused.
    StrictParams,
    /// §3: `x-uloop` expectations (project root, server session) are not checked.
    IgnoresExpectations,
    /// §3: error responses carry no `data` (no `type`).
    ErrorsWithoutData,
    /// §1: the Editor listens on every interface, not only loopback.
    AllInterfaces,
    /// §5: requests in flight at a reload are answered after the shutdown notification.
    AnswersAfterShutdown,
    /// §7: the discovery file names a pid that is not the Editor's (a dead one).
    DiscoveryDeadPid,
    /// §6: get-logs ignores LogType.
    IgnoresLogFilter,
    /// §6: run-tests counts skipped tests as passed.
    WrongTestCounts,
    /// §5: a PlayMode test run's answer dies with the domain entering play mode reloads (the callbacks that would answer were registered in the old one).
    LosesPlayModeAnswer,
    /// §5: entering play mode reloads the domain whatever the project's Enter Play Mode settings say.
    IgnoresEnterPlayModeSettings,
    /// §6: compile reports no error for a script the project gained with an #error in it (only the errors the Editor opened with).
    CompileMissesNewErrors,
    /// §4: progress goes back: a slowed tool's own steps are reported after its slowdown's seconds, though progress only grows.
    ProgressGoesBack,
    /// §7: the discovery file has no serverSessionId or protocolVersion (the shape of uLoopMCP's settings file).
    DiscoveryWithoutSession,
    /// §3: a request with a top-level field it does not know is refused -32600.
    RejectsExtraFields,
    /// §6: tools do not take the common TimeoutSeconds parameter (not listed; refused as unknown).
    NoTimeoutParameter,
    /// §2: a connection that breaks the framing or ends mid-frame takes the whole Editor down.
    FragileListener,
    /// §5: `x-resume` is ignored (the request runs again) although `resume` is advertised.
    ResumeReruns,
    /// §1: one connection is served at a time; the others wait for it to close.
    SerializesClients,
    /// §1: closed connections are never released: after 100 the Editor refuses new ones.
    LeaksConnections,
    /// §5, §7: after a quit the discovery file still says ready.
    QuitLeavesReady,
    /// §1: the Editor waits for a connection's first byte before accepting
    /// the next, so a silent probe connection holds up every other client.
    BlockingAccept,
    /// §7: the discovery file is rewritten in place, not atomically (a reader
    /// can find it empty or cut).
    DiscoveryInPlace,
    /// §7: the discovery file keeps saying `ready` while the domain reloads.
    DiscoveryStaysReady,
    /// §6: enum defaults are names the enum does not have (lower case), or,
    /// where the catalogue sends integers, an integer none of its values has.
    EnumDefaultsOutsideEnum,
    /// §6: `get-tool-details` describes every tool in other words than its
    /// catalogue does (a catalogue drifted from the one it claims to be).
    RewordedDescriptions,
    /// §1: a client that sends and never reads is read on: every answer is
    /// queued for it, and the Editor's memory grows without bound.
    QueuesWithoutBound,
    /// §7: requests without the token (or with a wrong one) are run,
    /// although the discovery file publishes a token.
    IgnoresToken,
    /// §7: the discovery file, which holds the token, is readable by every
    /// local user (mode 0644).
    DiscoveryWorldReadable,
    /// §6: get-hierarchy sends `entityId` as a JSON number (a JavaScript
    /// client rounds one past 2^53), not as decimal text.
    EntityIdsAsNumbers,
    /// §6: uLoopMCP 3's internal commands (`get-version`,
    /// `get-tool-details`) are listed by `get-tool-details` as tools, which
    /// v3-beta c50f54c never does (its v3.0.0-beta.1 tag listed them).
    ListsInternalCommands,
}

// Names (kebab-case of the variant) and descriptions (the doc comments)
// come from the `ValueEnum` derive: one list, kept by the compiler.
impl Defect {
    /// Every defect, in declaration order.
    pub fn all() -> &'static [Defect] {
        <Defect as clap::ValueEnum>::value_variants()
    }

    /// The defect as a value of one of the Editor's policies, applied to the
    /// model once at start: the Editor core carries out policies and never
    /// asks for a defect. Those that break one tool's answer are
    /// checked where it is made.
    pub fn shape(self, model: &mut crate::editor::model::EditorModel) {
        use crate::editor::model::{
            Decoding, HeaderError, NewlineFrames, Oversize, ReplyFraming,
            discovery::{DiscoveryPid, Readers, Writes},
            lifecycle::{InFlightAtShutdown, SessionAfterReload},
            listener::{Accepting, Backpressure, BrokenPeer, Interfaces},
            messages::{
                AfterParseError, Batches, Expectations, ExtraFields, IdEcho, Notifications, ParamNames, Resume,
                TimeoutParameter, Tokens, UnknownTool, WrongTypes,
            },
        };
        let (framing, messages, listener) = (&mut model.framing, &mut model.messages, &mut model.listener);
        let (discovery, lifecycle) = (&mut model.discovery, &mut model.lifecycle);
        match self {
            Defect::IdsAsStrings => messages.ids = IdEcho::AsStrings,
            Defect::IdsAsFloats => messages.ids = IdEcho::AsFloats,
            Defect::NoVer => messages.ver = false,
            Defect::ErrorsWithoutData => messages.error_data = false,
            Defect::AnswersNotifications => messages.notifications = Notifications::Answered,
            Defect::IgnoresBatches => messages.batches = Batches::Unanswered,
            Defect::ParseErrorCloses => messages.after_parse_error = AfterParseError::Close,
            Defect::RejectsExtraFields => messages.extra_fields = ExtraFields::Refused,
            Defect::IgnoresExpectations => messages.expectations = Expectations::Ignored,
            Defect::StrictParams => messages.param_names = ParamNames::Exact,
            Defect::AcceptsWrongTypes => messages.wrong_types = WrongTypes::Defaulted,
            Defect::UnknownToolWrongCode => messages.unknown_tool = UnknownTool::InvalidParams,
            Defect::NoTimeoutParameter => messages.timeout_parameter = TimeoutParameter::Refused,
            Defect::ResumeReruns => messages.resume = Resume::Reruns,
            Defect::IgnoresToken => messages.tokens = Tokens::Ignored,

            Defect::OversizeCloses => framing.oversize = Oversize::AnswerAndClose,
            Defect::NoNewlineFraming => framing.newline = NewlineFrames::Refused,
            Defect::FramingErrorKeepsOpen => framing.header_error = HeaderError::AnswerAndKeepOpen,
            Defect::NoPartialFrames => framing.decoding = Decoding::DropsPartialFrames,
            Defect::StrictHeaders => framing.decoding = Decoding::ExactHeader,
            Defect::LengthInCharacters => framing.decoding = Decoding::LengthInCharacters,
            Defect::OneFramePerRead => framing.decoding = Decoding::FirstFramePerRead,
            Defect::WrongReplyFraming => framing.replies = ReplyFraming::AlwaysNewline,

            Defect::AllInterfaces => listener.interfaces = Interfaces::All,
            Defect::SerializesClients => listener.accepting = Accepting::OneAtATime,
            Defect::BlockingAccept => listener.accepting = Accepting::WaitsForFirstByte,
            Defect::FragileListener => listener.broken_peer = BrokenPeer::StopsEditor,
            Defect::LeaksConnections => listener.connections = Some(100),
            Defect::QueuesWithoutBound => listener.backpressure = Backpressure::None,

            Defect::NoShutdownNotification => lifecycle.shutdown_notice = false,
            Defect::AnswersAfterShutdown => lifecycle.in_flight = InFlightAtShutdown::AnsweredAfterNotice,
            Defect::SameSessionAfterReload => lifecycle.session_after_reload = SessionAfterReload::Kept,
            Defect::NoListChangedAfterReload => lifecycle.list_changed_after_reload = false,

            Defect::DiscoveryDeadPid => discovery.pid = DiscoveryPid::Dead,
            Defect::DiscoveryWithoutSession => discovery.names_session = false,
            Defect::DiscoveryStaysReady => discovery.says_reloading = false,
            Defect::QuitLeavesReady => discovery.says_stopped = false,
            Defect::StaleDiscoveryPort => discovery.follows_port = false,
            Defect::DiscoveryInPlace => discovery.writes = Writes::InPlace,
            Defect::DiscoveryWorldReadable => discovery.readers = Readers::Everyone,

            Defect::IntegerEnumDefaults => model.extensions.enum_default_names = false,
            Defect::NoExtensions => {
                model.extensions.capabilities = false;
                model.extensions.tool_metadata = false;
            }
            // Breaks inside one tool's behaviour, checked by that tool.
            Defect::ListsInternalTools
            | Defect::SchemaTypesAsStrings
            | Defect::EnumDefaultsOutsideEnum
            | Defect::RewordedDescriptions
            | Defect::IgnoresLogFilter
            | Defect::WrongTestCounts
            | Defect::LosesPlayModeAnswer
            | Defect::IgnoresEnterPlayModeSettings
            | Defect::ProgressGoesBack
            | Defect::CompileMissesNewErrors
            | Defect::EntityIdsAsNumbers
            | Defect::ListsInternalCommands => {}
        }
    }

    /// What the defect breaks, in words.
    pub fn description(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .and_then(|v| v.get_help().map(ToString::to_string))
            .unwrap_or_default()
    }
}

impl fmt::Display for Defect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = clap::ValueEnum::to_possible_value(self).ok_or(fmt::Error)?;
        f.write_str(value.get_name())
    }
}

impl FromStr for Defect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        <Defect as clap::ValueEnum>::from_str(s, false).map_err(|_| {
            let names: Vec<String> = Defect::all().iter().map(ToString::to_string).collect();
            format!("unknown defect {s:?}; known defects: {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_defect_is_named_and_described() {
        assert_eq!(Defect::all().len(), 54);
        assert_eq!(Defect::IdsAsStrings.to_string(), "ids-as-strings");
        for &defect in Defect::all() {
            assert_eq!(defect.to_string().parse::<Defect>().unwrap(), defect);
            assert!(defect.description().starts_with('§'), "{defect}: {}", defect.description());
        }
        let unknown = "no-such-defect".parse::<Defect>().unwrap_err();
        assert!(unknown.contains("known defects: ids-as-strings, "), "{unknown}");
    }
}

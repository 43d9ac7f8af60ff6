//! How an Editor reads a message, checks a request before a tool runs, and
//! encodes its answers (protocol §3, §5). Both Editors follow the protocol
//! here ([`MessagePolicy::PROTOCOL`]); where uLoopMCP 2.1.1 differs it is in
//! [`super::ErrorPolicy`] and [`super::Reading`]. The other values are the
//! deliberate defects' (`serve --defect`), set by `Defect::shape`.

/// How the id of a request comes back in its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdEcho {
    /// As sent (protocol §3).
    Exact,
    /// A numeric id comes back as a string (`ids-as-strings`).
    AsStrings,
    /// A numeric id is read as a float: a big integer comes back rounded
    /// (`ids-as-floats`).
    AsFloats,
}

/// A client notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notifications {
    /// Never answered (protocol §4).
    Ignored,
    /// Answered with an empty result (`answers-notifications`).
    Answered,
}

/// A batch (a JSON array).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batches {
    /// Refused with one error, as the Editor's error policy words it.
    Refused,
    /// Never answered (`ignores-batches`).
    Unanswered,
}

/// The connection after a frame that is not JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterParseError {
    /// Answered; the connection goes on (protocol §3).
    KeepOpen,
    /// Answered, then closed (`parse-error-closes`).
    Close,
}

/// A top-level request field the Editor does not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtraFields {
    /// Ignored (protocol §3).
    Ignored,
    /// Refused `-32600` (`rejects-extra-fields`).
    Refused,
}

/// The `x-uloop` expectations (project root, server session).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expectations {
    /// Checked before the tool is looked up (protocol §3).
    Checked,
    /// Not checked (`ignores-expectations`).
    Ignored,
}

/// How parameter names are matched to a tool's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamNames {
    /// Case-insensitively; `null` params are no params (protocol §3).
    AnyCase,
    /// Exactly, and `null` params are refused (`strict-params`).
    Exact,
}

/// A parameter of the wrong type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrongTypes {
    /// Refused as invalid params (protocol §3).
    Refused,
    /// Silently replaced by the defaults (`accepts-wrong-types`).
    Defaulted,
}

/// A method that names no tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownTool {
    /// As the Editor's error policy answers it (`-32601`, or uLoopMCP's `-32603`).
    AsErrorPolicy,
    /// `-32602` (`unknown-tool-wrong-code`).
    InvalidParams,
}

/// The common `TimeoutSeconds` parameter (protocol §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutParameter {
    /// Taken by every tool (listed only where the Editor has the timeouts extension).
    Taken,
    /// Neither listed nor taken: refused as unknown (`no-timeout-parameter`).
    Refused,
}

/// A request without this Editor's `x-token`, where it has the token
/// extension and the user has not let such clients in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokens {
    /// Refused `-32603` `unauthorized`, nothing run (protocol §7).
    Required,
    /// Run as if it had the token (`ignores-token`).
    Ignored,
}

/// An `x-resume` request, where the Editor keeps a journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Answered from the journal (protocol §5).
    FromJournal,
    /// Run again as if new (`resume-reruns`).
    Reruns,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessagePolicy {
    pub ids: IdEcho,
    /// `Ver` in every result (protocol §3); off for `no-ver`.
    pub ver: bool,
    /// Error responses carry `data` (protocol §3); off for `errors-without-data`.
    pub error_data: bool,
    pub notifications: Notifications,
    pub batches: Batches,
    pub after_parse_error: AfterParseError,
    pub extra_fields: ExtraFields,
    pub expectations: Expectations,
    pub param_names: ParamNames,
    pub wrong_types: WrongTypes,
    pub unknown_tool: UnknownTool,
    pub timeout_parameter: TimeoutParameter,
    pub resume: Resume,
    pub tokens: Tokens,
}

impl MessagePolicy {
    pub const PROTOCOL: MessagePolicy = MessagePolicy {
        ids: IdEcho::Exact,
        ver: true,
        error_data: true,
        notifications: Notifications::Ignored,
        batches: Batches::Refused,
        after_parse_error: AfterParseError::KeepOpen,
        extra_fields: ExtraFields::Ignored,
        expectations: Expectations::Checked,
        param_names: ParamNames::AnyCase,
        wrong_types: WrongTypes::Refused,
        unknown_tool: UnknownTool::AsErrorPolicy,
        timeout_parameter: TimeoutParameter::Taken,
        resume: Resume::FromJournal,
        tokens: Tokens::Required,
    };

    /// `id` as this Editor echoes it.
    pub fn echo(self, id: &editor_link::jsonrpc::Id) -> editor_link::jsonrpc::Id {
        use editor_link::jsonrpc::Id;
        let Id::Number(n) = id else { return id.clone() };
        match self.ids {
            IdEcho::Exact => id.clone(),
            IdEcho::AsStrings => Id::String(n.as_str().to_owned()),
            IdEcho::AsFloats => {
                let exact = n.as_str().parse::<i64>().is_ok() || n.as_str().parse::<u64>().is_ok();
                let float = n.as_str().parse::<f64>().ok().and_then(serde_json::Number::from_f64);
                match float.filter(|f| !exact && f.to_string() != n.as_str()) {
                    Some(float) => Id::Number((&float).into()),
                    None => id.clone(),
                }
            }
        }
    }
}

//! Why a check did not pass: the one word every layer of the suite uses
//! for it (cases, the Editor client, the bridge under test, the runner).

/// Why a check did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The target broke the requirement.
    Violation(String),
    /// The harness could not carry out the check.
    Harness(String),
    /// The Editor could not be reached: a connection to it was refused or
    /// timed out. (A harness error in itself; the runner fails the case
    /// instead when the same Editor answered the cases before it.)
    Unreachable(String),
    /// The target cannot run this case (why, in words): reported skipped.
    NotApplicable(String),
}

impl Finding {
    /// What was found, in words.
    pub fn detail(&self) -> &str {
        match self {
            Finding::Violation(why)
            | Finding::Harness(why)
            | Finding::Unreachable(why)
            | Finding::NotApplicable(why) => why,
        }
    }
}

/// Fails the check with a violation.
pub fn violation<T>(message: impl Into<String>) -> Result<T, Finding> {
    Err(Finding::Violation(message.into()))
}

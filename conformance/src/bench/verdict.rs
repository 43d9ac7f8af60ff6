//! Which answers count: a figure is only a figure if the answer is real —
//! the Editor ran the call. A bridge that answers "waiting for Unity, retry"
//! with a success, or anything else it made up, gets nothing for it, and
//! every answer that was not real is counted and printed.

use editor_link::methods;

use super::{
    Stats,
    clients::{Answer, Answered},
};

/// How one call was answered, by the benchmark's rule: an answer counts
/// only if the Editor really ran the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No error, no `isError`, the fake's run counter for the tool went up,
    /// and (for `ping`) the answer echoes this call's own message.
    Real,
    /// A JSON-RPC error or an `isError` result.
    Failed,
    /// Shaped like a success, but the Editor did not run the call (or the
    /// answer is not this call's): a fake answer.
    NotRun,
}

/// Answers counted by verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    pub real: u64,
    pub failed: u64,
    /// Success-shaped answers the Editor did not give.
    pub not_run: u64,
    /// Calls made in the window whose answer never came.
    pub unanswered: u64,
}

impl Tally {
    pub(super) fn count(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Real => self.real += 1,
            Verdict::Failed => self.failed += 1,
            Verdict::NotRun => self.not_run += 1,
        }
    }

    pub(super) fn add(&mut self, other: Tally) {
        self.real += other.real;
        self.failed += other.failed;
        self.not_run += other.not_run;
        self.unanswered += other.unanswered;
    }

    /// Answers that were not real.
    pub fn not_real(&self) -> u64 {
        self.failed + self.not_run + self.unanswered
    }
}

/// Reload recovery as users meet it: calls keep coming through the reload.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Recovery {
    /// The Editor listening again to the first real answer, ms.
    pub ms: Stats,
    /// How the calls made from the reload's start to that answer were
    /// answered, over every reload.
    pub window: Tally,
}

/// The rule every figure follows, in words, for `tool`.
pub(super) fn success_rule(tool: &str) -> String {
    let mut rule = format!(
        "a tools/call of {tool} counts only if its answer has no JSON-RPC error and no isError, and fake-unity's run counter for {tool} went up for it"
    );
    if tool == methods::PING {
        rule.push_str(", and the answer echoes the call's own Message (bench-N), which only the Editor could do");
    }
    rule
}

/// One answer by the rule: `ran` is how often the Editor has run the tool
/// since the calls being judged began, `real` how many of their answers
/// were found real so far (a success beyond what it ran is made up), and
/// `echo` what the answer must echo, if anything.
pub(super) fn judge(answer: &Answer, echo: Option<u64>, ran: u64, real: u64) -> Verdict {
    match answer.error {
        Some(_) => Verdict::Failed,
        None if answer.echo != echo || ran <= real => Verdict::NotRun,
        None => Verdict::Real,
    }
}

/// Pipelined answers judged together: real at most as many as the Editor
/// ran (and, for `ping`, only those echoing their own call).
pub(super) fn judge_many(answered: &[Answered], runs: u64) -> Tally {
    let failed = answered.iter().filter(|a| a.failed).count() as u64;
    let succeeded = answered.len() as u64 - failed;
    let echoed = answered.iter().filter(|a| !a.failed && a.echo == a.echo_expected).count() as u64;
    let real = echoed.min(runs);
    Tally { real, failed, not_run: succeeded - real, unanswered: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(failed: bool, expected: Option<u64>, echo: Option<u64>) -> Answered {
        Answered { failed, echo_expected: expected, echo }
    }

    #[test]
    fn only_answers_the_editor_gave_are_real() {
        let answers = [
            answered(false, Some(1), Some(1)),
            answered(false, Some(2), Some(2)),
            // Another call's echo, or none: not this call's answer.
            answered(false, Some(3), Some(2)),
            answered(false, Some(4), None),
            answered(true, Some(5), None),
        ];
        assert_eq!(judge_many(&answers, 5), Tally { real: 2, failed: 1, not_run: 2, unanswered: 0 });
        // Success-shaped answers beyond what the Editor ran are made up.
        let blind = [answered(false, None, None), answered(false, None, None), answered(false, None, None)];
        assert_eq!(judge_many(&blind, 1), Tally { real: 1, failed: 0, not_run: 2, unanswered: 0 });
        assert_eq!(judge_many(&blind, 0).not_real(), 3);
    }
}

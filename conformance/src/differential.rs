//! The differential run (`unity-conformance differential`): every fault
//! scenario of `fixtures/scenarios/` that the package's headless host can
//! play, played through the bridge against the embedded fake (the package's
//! catalogue) and against the host under mono, and what the client saw
//! compared step by step: each answer's kind, whether an error says the
//! call may have run, and the progress words in their order. The two
//! simulated Editors follow one threading model (docs/editor-link-protocol.md
//! §6, "What waits for the main thread"); where they part, the run fails
//! with both sides shown. A scenario the host cannot play says why.

use fake_unity::{Defect, EditorKind};

use crate::{
    bridge::BridgeCommand,
    cases::mcp::scenarios::{self, Seen},
    finding::Finding,
    target::Target,
    wire_log::WireLog,
};

/// One scenario's line of the table.
#[derive(Debug)]
pub struct Row {
    pub scenario: &'static str,
    pub verdict: Verdict,
}

/// How the two Editors compared on a scenario.
#[derive(Debug)]
pub enum Verdict {
    /// Both gave the client the same, step by step.
    Same(Vec<Seen>),
    /// They parted: each side's steps, or why a side did not finish.
    Different { fake: Result<Vec<Seen>, String>, host: Result<Vec<Seen>, String> },
    /// The host cannot play it, and why.
    HostCannotPlay(String),
}

impl Row {
    pub fn is_difference(&self) -> bool {
        matches!(self.verdict, Verdict::Different { .. })
    }
}

/// What of a step two Editors must agree on: everything the client saw but
/// the answer's own text (a tool's result differs in its data, an error in
/// the Editor's wording).
fn agree(a: &[Seen], b: &[Seen]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(a, b)| a.tool == b.tool && a.answer == b.answer && a.ran == b.ran && a.progress == b.progress)
}

/// Plays `names` against the embedded fake (with `defect`, to show the run
/// failing) and against `host`, one scenario at a time.
pub async fn run(bridge: &BridgeCommand, host: &Target, defect: Option<Defect>, names: &[&'static str]) -> Vec<Row> {
    let fake = Target::Fake { editor: EditorKind::Package, defect };
    let mut rows = Vec::new();
    for &scenario in names {
        let host_side = play(host, bridge, scenario).await;
        let verdict = match host_side {
            Err(Finding::NotApplicable(why)) => Verdict::HostCannotPlay(why),
            host_side => {
                let fake_side = play(&fake, bridge, scenario).await;
                let shown = |side: Result<Vec<Seen>, Finding>| side.map_err(|f| format!("{f:?}"));
                match (&fake_side, &host_side) {
                    (Ok(a), Ok(b)) if agree(a, b) => Verdict::Same(a.clone()),
                    _ => Verdict::Different { fake: shown(fake_side), host: shown(host_side) },
                }
            }
        };
        rows.push(Row { scenario, verdict });
    }
    rows
}

async fn play(target: &Target, bridge: &BridgeCommand, scenario: &str) -> Result<Vec<Seen>, Finding> {
    let session = target.open(WireLog::default(), bridge).await?;
    scenarios::play(session, scenario).await
}

/// The table as text: a line per scenario, each step under it.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let steps = |out: &mut String, label: &str, side: &Result<Vec<Seen>, String>| match side {
        Ok(steps) => {
            for (n, step) in steps.iter().enumerate() {
                out.push_str(&format!("      {label} {}. {step}\n", n + 1));
                if step.answer != scenarios::Answered::Result {
                    out.push_str(&format!("           said: {}\n", first_line(&step.text)));
                }
            }
        }
        Err(why) => out.push_str(&format!("      {label} did not finish: {why}\n")),
    };
    for row in rows {
        match &row.verdict {
            Verdict::Same(seen) => {
                out.push_str(&format!("  SAME       {}\n", row.scenario));
                for (n, step) in seen.iter().enumerate() {
                    out.push_str(&format!("      {}. {step}\n", n + 1));
                    if step.answer != scenarios::Answered::Result {
                        out.push_str(&format!("         said (fake): {}\n", first_line(&step.text)));
                    }
                }
            }
            Verdict::Different { fake, host } => {
                out.push_str(&format!("  DIFFERENT  {}\n", row.scenario));
                steps(&mut out, "fake", fake);
                steps(&mut out, "host", host);
            }
            Verdict::HostCannotPlay(why) => {
                out.push_str(&format!(
                    "  NOT PLAYED {}: {}\n",
                    row.scenario,
                    why.trim_start_matches("not applicable in front of this Editor: ")
                        .trim_start_matches("not applicable: ")
                ));
            }
        }
    }
    let count = |f: fn(&Verdict) -> bool| rows.iter().filter(|r| f(&r.verdict)).count();
    out.push_str(&format!(
        "differential: {} scenarios: {} the same, {} different, {} the host cannot play\n",
        rows.len(),
        count(|v| matches!(v, Verdict::Same(_))),
        count(|v| matches!(v, Verdict::Different { .. })),
        count(|v| matches!(v, Verdict::HostCannotPlay(_))),
    ));
    out
}

fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(160) {
        Some((at, _)) => &line[..at],
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::mcp::scenarios::{Answered, Claim};

    fn step(answer: Answered, ran: Claim, progress: &[&str]) -> Seen {
        Seen {
            tool: "compile".into(),
            answer,
            ran,
            progress: progress.iter().map(|p| (*p).to_owned()).collect(),
            text: "whatever".into(),
        }
    }

    #[test]
    fn steps_agree_on_what_the_client_saw_not_on_the_words_of_a_result() {
        let a = step(Answered::Result, Claim::Ran, &["Working (N s)"]);
        let mut b = a.clone();
        b.text = "other data".into();
        let one = std::slice::from_ref(&a);
        assert!(agree(one, &[b]));
        assert!(!agree(one, &[step(Answered::ToolError, Claim::MayHaveRun, &["Working (N s)"])]));
        assert!(!agree(one, &[step(Answered::Result, Claim::Ran, &[])]));
        assert!(!agree(one, &[a.clone(), a.clone()]));
    }
}

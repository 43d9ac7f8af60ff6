//! `unity-conformance prove`: every check shown failing.

use std::{io::Write, process::ExitCode};

use super::{runtime, this_program};
use crate::{
    case::Status,
    cases,
    prove::{self, Broken, Coverage},
    report, runner,
};

/// Its options (the help is the subcommand's, in [`super`]).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only these defects (`fake-unity defects`, `bridge-defects`; a
    /// name both have is both unless written `fake:NAME` or `bridge:NAME`).
    #[arg(long, value_name = "NAME")]
    pub defect: Vec<String>,
    /// Also serve each fake defect by a process of its own and run the cases
    /// it claims (but the `mcp` ones) against it over TCP: one must fail.
    #[arg(long)]
    pub over_tcp: bool,
    /// How many proofs run side by side: cases against their own embedded
    /// fakes, and served fakes over TCP (each runs its suite one case at a
    /// time, as its one Editor is shared). Most of a proof is waiting.
    #[arg(long, value_name = "N", default_value_t = runner::DEFAULT_JOBS as u16, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,
}

/// `unity-conformance prove`.
pub fn command(args: &Args) -> ExitCode {
    let (names, over_tcp, jobs) = (&args.defect, args.over_tcp, usize::from(args.jobs));
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    let all = Broken::all();
    let mut chosen: Vec<Broken> = Vec::new();
    for name in names {
        let (side, bare) = match name.split_once(':') {
            Some((side @ ("fake" | "bridge"), bare)) => (Some(side), bare),
            _ => (None, name.as_str()),
        };
        let matching: Vec<Broken> = all
            .iter()
            .copied()
            .filter(|d| d.name() == bare)
            .filter(|d| {
                side.is_none_or(|side| matches!((side, d), ("fake", Broken::Fake(_)) | ("bridge", Broken::Bridge(_))))
            })
            .collect();
        if matching.is_empty() {
            eprintln!(
                "unity-conformance prove: no defect is named {name} (fake-unity defects, unity-conformance bridge-defects)"
            );
            return ExitCode::from(2);
        }
        for defect in matching {
            if !chosen.contains(&defect) {
                chosen.push(defect);
            }
        }
    }
    let whole = chosen.is_empty();
    if whole {
        chosen = all;
    }
    let catalogue = cases::catalogue();
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    let mut failed = 0;
    if whole {
        let coverage = Coverage::of(&catalogue);
        for id in &coverage.unclaimed {
            let _ = writeln!(stdout, "UNCLAIMED  {id}: no defect shows this case failing");
        }
        for defect in &coverage.idle {
            let _ = writeln!(stdout, "IDLE       {defect}: claims no case of the catalogue");
        }
        failed += coverage.unclaimed.len() + coverage.idle.len();
    }
    let mut shown = 0;
    let (fakes, bridges): (Vec<Broken>, Vec<Broken>) = chosen.iter().partition(|d| matches!(d, Broken::Fake(_)));
    runtime.block_on(async {
        for defects in [fakes.clone(), bridges] {
            prove::prove(&defects, &catalogue, &program, jobs, |proof| {
                let r = &proof.result;
                let verdict = if proof.holds { "SHOWN " } else { "MISSED" };
                let _ = writeln!(
                    stdout,
                    "{verdict}  {:<34} {:<38} {} {}",
                    proof.defect.to_string(),
                    r.id,
                    r.status,
                    report::first_words(&r.detail, 160)
                );
                if proof.holds {
                    shown += 1;
                } else {
                    failed += 1;
                    for line in r.wire.iter().take(40) {
                        let _ = writeln!(stdout, "          {line}");
                    }
                }
            })
            .await;
        }
        if over_tcp {
            use futures_util::StreamExt;
            let mut runs = futures_util::stream::iter(fakes.iter().filter_map(|d| match d {
                Broken::Fake(d) => Some(*d),
                Broken::Bridge(_) => None,
            }))
            .map(|d| {
                let (program, catalogue) = (&program, &catalogue);
                async move { (d, prove::suite_over_tcp(program, d, catalogue).await) }
            })
            .buffer_unordered(jobs);
            while let Some((defect, outcome)) = runs.next().await {
                let name = match prove::editor_over_tcp(defect, &catalogue) {
                    fake_unity::EditorKind::Package => Broken::Fake(defect).to_string(),
                    editor => format!("{} as {editor}", Broken::Fake(defect)),
                };
                match outcome {
                    Ok((not_passed, ran)) => match not_passed.iter().find(|r| r.status == Status::Fail) {
                        Some(first) => {
                            shown += 1;
                            let _ = writeln!(
                                stdout,
                                "SHOWN   {name:<34} over TCP: {} of {ran} cases did not pass, the first to fail {}",
                                not_passed.len(),
                                first.id
                            );
                        }
                        None => {
                            failed += 1;
                            let _ = writeln!(stdout, "MISSED  {name:<34} over TCP: {ran} cases ran without a failure");
                        }
                    },
                    Err(e) => {
                        failed += 1;
                        let _ = writeln!(stdout, "ERROR   {name:<34} over TCP: {e}");
                    }
                }
            }
        }
    });
    let _ = writeln!(stdout, "unity-conformance prove: {shown} failures shown, {failed} not shown");
    ExitCode::from(if failed == 0 { 0 } else { 1 })
}

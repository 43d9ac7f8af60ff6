//! `unity-conformance record-sessions`: the recorded sessions made again.

use std::{io::Write, path::PathBuf, process::ExitCode};

use super::{runtime, this_program};
use crate::{bridge::BridgeCommand, cases, sessions, target};

/// Its options (the help is the subcommand's, in [`super`]).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to write NAME.jsonl (default: the repository's fixtures/sessions).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only these workflows (default: every recorded one).
    #[arg(long, value_name = "NAME")]
    pub name: Vec<String>,
}

/// `unity-conformance record-sessions`.
pub fn command(args: Args) -> ExitCode {
    let (out, names) = (args.out, &args.name);
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    let out = out.unwrap_or_else(sessions::sessions_dir);
    let unknown: Vec<&String> = names.iter().filter(|n| !sessions::RECORDED.contains(&n.as_str())).collect();
    if !unknown.is_empty() {
        eprintln!(
            "unity-conformance record-sessions: not a recorded workflow: {unknown:?} (they are {:?})",
            sessions::RECORDED
        );
        return ExitCode::from(2);
    }
    let workflows = cases::mcp::snapshots::workflows();
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let bridge = BridgeCommand::embedded(program, None);
    for name in sessions::RECORDED.iter().filter(|n| names.is_empty() || names.iter().any(|m| m == *n)) {
        let Some(workflow) = workflows.iter().find(|w| w.name == *name) else {
            eprintln!("unity-conformance record-sessions: {name} is not in fixtures/workflows.json");
            return ExitCode::from(2);
        };
        let recorded = runtime.block_on(async {
            let project = target::fixture_copy()?;
            let file = out.join(format!("{name}.jsonl"));
            sessions::record(workflow, &bridge, project.path(), &file, fake_unity::Scenario::default())
                .await
                .map_err(|e| format!("{e:?}"))?;
            Ok::<_, String>(file)
        });
        match recorded {
            Ok(file) => {
                let _ = writeln!(std::io::stdout(), "wrote {}", file.display());
            }
            Err(e) => {
                eprintln!("unity-conformance record-sessions: {name}: {e}");
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

//! `unity-conformance`: checks that an editor-link endpoint behaves as
//! `docs/editor-link-protocol.md` requires, against the embedded fake by default.
//!
//! Map of the modules, from the ground up. The ground floor, small nouns
//! every layer uses:
//!
//! - [`finding`] — why a check did not pass (a violation, a harness error,
//!   an Editor that cannot be reached, not applicable).
//! - [`wire_log`] — the wire traffic of one case, for the report.
//! - [`did_it_run`] — what a failed call's error text says about whether
//!   Unity may have run it.
//! - [`stall_meter`] — how long a loaded machine held the harness off the
//!   CPU (deadline checks allow for it).
//! - [`bridge_defect`] — a deliberately broken bridge (one MCP rule each),
//!   so every `mcp` case can be shown failing.
//!
//! What is tested and how it is reached:
//!
//! - [`bridge`] — the bridge under test as a child process, and the raw MCP
//!   stdio client the `mcp` cases drive it with.
//! - [`target`] — what is tested (the embedded fake, `tcp://HOST:PORT`,
//!   `unix:PATH`, our C# headless under mono, a real Unity) and a case's
//!   [`target::Session`];
//! - [`editor_client`] — the wire clients a session hands a case
//!   ([`editor_client::EditorClient`], [`editor_client::RawClient`]) and what
//!   a uLoopMCP 3 Editor lacks.
//! - [`launch`] — the Editors the suite starts itself: the mono headless
//!   host and Unity in batch mode.
//! - [`reload`] — domain reloads the cases cause: through a control API,
//!   or the real way (a script written into `Assets/`, then `compile`).
//!
//! The cases:
//!
//! - [`case`] — what a case is: a stable id (protocol section + slug), the
//!   requirement in words, its reference, a level (MUST, SHOULD, INFO), and
//!   the statuses a run gives it.
//! - [`reference`] — what §6 says each tool takes and answers (cases made
//!   per tool come from it).
//! - [`workflow`] — scripted agent sessions (`fixtures/workflows.json`).
//! - [`snapshot`] — MCP output snapshots: redaction, insta files, field
//!   by field differences.
//! - [`cases`] — the catalogue, one file per group; `cases/mcp/` holds every
//!   case through the bridge.
//!
//! Running them:
//!
//! - [`profile`] — which cases apply: what each checks (core, an
//!   extension, a tool), what the Editor offers, the profile asked for.
//! - [`runner`] — selection, running each case with a deadline (several
//!   side by side), results.
//! - [`report`] — the console report, JSON, JUnit XML, the HTML page and
//!   the Markdown summary.
//! - [`home`] — where the suite's data is (`UNITY_CONFORMANCE_HOME` for a
//!   released binary).
//! - [`prove`] — `unity-conformance prove`: which cases each deliberate
//!   defect breaks, and running them to show every check failing.
//! - [`sessions`] — workflows recorded as editor-link transcripts
//!   (`fixtures/sessions/`, `unity-conformance record-sessions`) and their replay.
//! - [`snippets`] — the hostile-snippet corpus of execute-dynamic-code
//!   (`fixtures/hostile-snippets.json`), run at a security level.
//! - [`differential`] — `unity-conformance differential`: the fault
//!   scenarios against the fake and the package's headless host, what the
//!   client saw compared.
//! - [`bench`] — `unity-conformance bench`: measured figures for the bridge
//!   (and any other bridge command beside it) and for the fake.
//! - [`cli`] — the command line: one module per subcommand.

pub mod bench;
pub mod bridge;
pub mod bridge_defect;
pub mod case;
pub mod cases;
pub mod cli;
pub mod did_it_run;
pub mod differential;
pub mod editor_client;
pub mod finding;
pub mod home;
pub mod launch;
pub mod profile;
pub mod prove;
pub mod reference;
pub mod reload;
pub mod report;
pub mod runner;
pub mod sessions;
pub mod snapshot;
pub mod snippets;
pub mod stall_meter;
pub mod target;
pub mod wire_log;
pub mod workflow;

//! `unity-versions` (unity-package/Tests~/unity-versions runs this):
//!
//! - with no command, or `check`: the package compiled against every
//!   committed version's API; the matrix; exit 1 on any error.
//! - `add --reference DIR --tag TAG`: generates a version's API from a
//!   UnityCsReference checkout (or clone) and commits it under `versions/`.
//! - `validate --reference DIR --tag TAG`: the same, into a temporary
//!   folder, and what breaks — the first step of validating a new Unity.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use unity_api::Package;
use unity_api::defines::UnityVersion;
use unity_api::generate::{TestFramework, generate};
use unity_api::matrix::{self, VersionResult};
use unity_api::mcs::Toolchain;
use unity_api::source::Source;

#[derive(Parser, Debug)]
#[command(
    name = "unity-versions",
    about = "The Unity package compiled against each Unity version's API, generated from Unity's reference source"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Write the matrix as JSON (one object per version).
    #[arg(long, global = true)]
    json: Option<PathBuf>,
    /// Write the matrix as one self-contained HTML page (the versions side
    /// by side; each version's errors and missing reflection targets).
    #[arg(long, global = true)]
    html: Option<PathBuf>,
    /// The package to compile (default: the one this tool sits in); another
    /// checkout's, to compare before and after a change.
    #[arg(long, global = true)]
    package: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile the package against every committed version (the default).
    Check {
        /// Only these versions.
        versions: Vec<String>,
    },
    /// Generate a version's API and commit it under versions/.
    Add(Generate),
    /// Generate a version's API into a temporary folder and show what breaks.
    Validate(Generate),
}

#[derive(Args, Debug)]
struct Generate {
    /// A checkout or clone of Unity-Technologies/UnityCsReference.
    #[arg(long)]
    reference: PathBuf,
    /// The Unity version's tag in it (6000.5.2f1).
    #[arg(long)]
    tag: String,
    /// The com.unity.test-framework package's source (a checkout, clone or folder).
    #[arg(long)]
    test_framework: Option<PathBuf>,
    /// The revision of it to read (a tag or commit; default: the folder as it is).
    #[arg(long)]
    test_framework_rev: Option<String>,
    /// The package's folder inside that repository.
    #[arg(long, default_value = "")]
    test_framework_folder: String,
    /// The repository's name, as recorded with the version.
    #[arg(long, default_value = "needle-mirror/com.unity.test-framework")]
    test_framework_repository: String,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("unity-versions: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let toolchain = Toolchain::find()?;
    let out = tempfile::tempdir()?;
    let package = Package::build(&cli.package.clone().unwrap_or_else(Package::here), out.path())?;
    let results = match cli.command.unwrap_or(Command::Check { versions: Vec::new() }) {
        Command::Check { versions } => {
            let mut files = matrix::committed(&Package::versions_dir())?;
            if !versions.is_empty() {
                files.retain(|f| versions.iter().any(|v| f.file_stem().is_some_and(|s| s.to_string_lossy() == *v)));
                anyhow::ensure!(!files.is_empty(), "no committed version is one of {versions:?}");
            }
            check_all(&files, &package, &toolchain)?
        }
        Command::Add(args) => {
            let api = generate_one(&args, &package, &toolchain)?;
            let path = Package::versions_dir().join(format!("{}.json", api.unity));
            std::fs::create_dir_all(Package::versions_dir())?;
            std::fs::write(&path, api.to_json()?)?;
            eprintln!("unity-versions: wrote {}", path.display());
            vec![matrix::check(&api, &package, &toolchain)?]
        }
        Command::Validate(args) => {
            let api = generate_one(&args, &package, &toolchain)?;
            vec![matrix::check(&api, &package, &toolchain)?]
        }
    };
    std::io::Write::write_all(&mut std::io::stdout().lock(), matrix::table(&results, &toolchain.version).as_bytes())?;
    if let Some(json) = cli.json {
        std::fs::write(&json, serde_json::to_string_pretty(&results)?)
            .with_context(|| format!("writing {}", json.display()))?;
    }
    if let Some(html) = cli.html {
        if let Some(dir) = html.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&html, matrix::html(&results, &toolchain.version))
            .with_context(|| format!("writing {}", html.display()))?;
    }
    let failed = results.iter().any(|r| r.errors > 0);
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Every version, two at a time (mcs runs on one core).
fn check_all(files: &[PathBuf], package: &Package, toolchain: &Toolchain) -> anyhow::Result<Vec<VersionResult>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(file) = files.get(i) else {
                        break;
                    };
                    let result = matrix::load(file).and_then(|api| matrix::check(&api, package, toolchain));
                    results.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((i, result));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn generate_one(args: &Generate, package: &Package, toolchain: &Toolchain) -> anyhow::Result<unity_api::api::Api> {
    let version: UnityVersion = args.tag.parse().map_err(anyhow::Error::msg)?;
    let reference = Source::new(&args.reference, Some(&args.tag));
    let test_framework = match &args.test_framework {
        Some(dir) => {
            let source = Source::new(dir, args.test_framework_rev.as_deref());
            let version = test_framework_version(&source, &args.test_framework_folder)?;
            Some(TestFramework {
                source,
                folder: args.test_framework_folder.clone(),
                version,
                repository: args.test_framework_repository.clone(),
            })
        }
        None => None,
    };
    let generated = generate(
        &version,
        &reference,
        "Unity-Technologies/UnityCsReference",
        test_framework.as_ref(),
        package,
        toolchain,
    )?;
    let types = &generated.api.types;
    let full = types.iter().filter(|t| t.detail == unity_api::api::Detail::Full).count();
    let members: usize = types.iter().flat_map(|t| &t.parts).map(|p| p.members.len()).sum();
    eprintln!(
        "unity-versions: {} from {} files ({} declarations tree-sitter could not parse) in {:.1} s: {} types ({full} full), {members} members, settled in {} rounds",
        version,
        generated.files,
        generated.parse_errors,
        generated.seconds,
        types.len(),
        generated.rounds
    );
    for (ty, file, count) in &generated.unparsed_in_full {
        eprintln!(
            "unity-versions: warning: {ty} ({file}): {count} declarations tree-sitter could not parse; a member may be missing"
        );
    }
    Ok(generated.api)
}

/// The test framework's version, from its package.json.
fn test_framework_version(source: &Source, folder: &str) -> anyhow::Result<String> {
    let path = if folder.is_empty() {
        "package.json".to_owned()
    } else {
        format!("{}/package.json", folder.trim_end_matches('/'))
    };
    let text = source.read(&path)?;
    let json: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{path} is not JSON"))?;
    json["version"].as_str().map(str::to_owned).with_context(|| format!("{path} has no version"))
}

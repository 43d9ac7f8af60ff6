//! Mono's C# compiler, `mcs`, and what it reports. It is not Unity's
//! compiler (Roslyn): it reads C# 7.2, so the package stays inside the
//! subset both read (reference/unity-package-notes.md), and the matrix says
//! which compiler it ran.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The compiler and the assemblies the package is compiled with.
#[derive(Debug, Clone)]
pub struct Toolchain {
    pub version: String,
    pub newtonsoft: PathBuf,
    pub nunit: PathBuf,
}

impl Toolchain {
    /// Finds mcs and Debian's Newtonsoft.Json and NUnit assemblies.
    pub fn find() -> anyhow::Result<Toolchain> {
        let out = Command::new("mcs").arg("--version").output().map_err(|e| {
            anyhow::anyhow!(
                "cannot run mcs ({e}): apt-get install mono-mcs libnewtonsoft-json-cil-dev nunit-console libnunit-cil-dev libmono-cecil-cil-dev"
            )
        })?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let find = |name: &str| -> anyhow::Result<PathBuf> {
            for root in ["/usr/lib/cli", "/usr/lib/mono"] {
                if let Some(found) = find_file(Path::new(root), name) {
                    return Ok(found);
                }
            }
            bail!(
                "{name} not found under /usr/lib/cli or /usr/lib/mono (apt-get install libnewtonsoft-json-cil-dev libnunit-cil-dev)"
            )
        };
        Ok(Toolchain { version, newtonsoft: find("Newtonsoft.Json.dll")?, nunit: find("nunit.framework.dll")? })
    }
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in &entries {
        if path.file_name().is_some_and(|n| n == name) && path.is_file() {
            return Some(path.clone());
        }
    }
    entries.iter().filter(|p| p.is_dir()).find_map(|p| find_file(p, name))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One thing mcs reported.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: String,
    /// The file as given to mcs ("" for errors without a place).
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Diagnostic {
    /// `CS0618` / `CS0612`: a use of something `[Obsolete]` as a warning.
    pub fn is_obsolete_warning(&self) -> bool {
        self.severity == Severity::Warning && (self.code == "CS0618" || self.code == "CS0612")
    }
}

/// One compilation.
#[derive(Debug, Default)]
pub struct Compilation<'a> {
    pub output: Option<&'a Path>,
    pub sources: Vec<PathBuf>,
    pub references: Vec<PathBuf>,
    pub defines: Vec<String>,
    /// Warnings as errors, except obsolete uses (they are listed instead).
    pub strict: bool,
    pub unsafe_code: bool,
    pub langversion: &'a str,
}

/// Runs mcs; whether it produced the assembly, and what it reported.
pub fn compile(compilation: &Compilation<'_>) -> anyhow::Result<(bool, Vec<Diagnostic>)> {
    let mut mcs = Command::new("mcs");
    mcs.arg("-target:library").arg(format!("-langversion:{}", compilation.langversion)).arg("-nologo");
    if let Some(output) = compilation.output {
        mcs.arg(format!("-out:{}", output.display()));
    }
    if compilation.strict {
        mcs.arg("-warnaserror+").arg("-warnaserror-:618,612").arg("-nowarn:1591");
    } else {
        mcs.arg("-warn:0");
    }
    if compilation.unsafe_code {
        mcs.arg("-unsafe");
    }
    if !compilation.defines.is_empty() {
        mcs.arg(format!("-define:{}", compilation.defines.join(";")));
    }
    for reference in &compilation.references {
        mcs.arg(format!("-r:{}", reference.display()));
    }
    mcs.args(&compilation.sources);
    let out = mcs.output().context("running mcs")?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let mut diagnostics: Vec<Diagnostic> = text.lines().filter_map(parse_line).collect();
    diagnostics.sort();
    diagnostics.dedup();
    Ok((out.status.success(), diagnostics))
}

/// `file(line,col): error CS0246: message` or `error CS0006: message`.
pub fn parse_line(line: &str) -> Option<Diagnostic> {
    let (place, rest) = match line.find("): ") {
        Some(at) if line[..at].contains('(') => (&line[..=at], &line[at + 3..]),
        _ => ("", line),
    };
    let (severity, rest) = if let Some(rest) = rest.strip_prefix("error ") {
        (Severity::Error, rest)
    } else if let Some(rest) = rest.strip_prefix("warning ") {
        (Severity::Warning, rest)
    } else {
        return None;
    };
    let (code, message) = rest.split_once(": ")?;
    if !code.starts_with("CS") {
        return None;
    }
    let (file, line_number, column) = match place.rfind('(') {
        Some(open) => {
            let numbers = place[open + 1..place.len() - 1]
                .split(',')
                .map(|n| n.trim().parse().unwrap_or(0))
                .collect::<Vec<usize>>();
            (place[..open].to_owned(), numbers.first().copied().unwrap_or(0), numbers.get(1).copied().unwrap_or(0))
        }
        None => (String::new(), 0, 0),
    };
    Some(Diagnostic { severity, code: code.to_owned(), file, line: line_number, column, message: message.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcs_lines_are_read_with_their_place() {
        let d = parse_line("Editor/Unity/UnityEditorBackend.cs(151,24): error CS0619: `UnityEngine.Object.GetInstanceID()' is obsolete: `x'").unwrap();
        assert_eq!(
            (d.severity, d.code.as_str(), d.file.as_str(), d.line, d.column),
            (Severity::Error, "CS0619", "Editor/Unity/UnityEditorBackend.cs", 151, 24)
        );
        assert!(d.message.starts_with("`UnityEngine.Object.GetInstanceID()'"));
        let w = parse_line("a.cs(3,1): warning CS0618: `X' is obsolete").unwrap();
        assert!(w.is_obsolete_warning());
        let placeless = parse_line("error CS0006: Metadata file `x.dll' could not be found").unwrap();
        assert_eq!((placeless.file.as_str(), placeless.line), ("", 0));
        assert!(parse_line("Compilation failed: 1 error(s), 0 warnings").is_none());
    }
}

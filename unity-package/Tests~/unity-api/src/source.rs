//! Where the C# comes from: a git repository at a tag (one checkout, or a
//! bare clone, serves every version) or a plain folder of sources.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// A set of C# files, read from a git tree or a folder.
#[derive(Debug, Clone)]
pub struct Source {
    pub root: PathBuf,
    /// The git revision to read (a tag); `None` reads the folder as it is.
    pub revision: Option<String>,
}

/// Where a version's files came from, as recorded with its API.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Origin {
    pub repository: String,
    pub tag: String,
    /// The commit the tag names (empty for a folder that is not in git).
    pub commit: String,
    /// The package read from it, where it is one (`com.unity.test-framework@1.7.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

impl Source {
    pub fn new(root: &Path, revision: Option<&str>) -> Source {
        Source { root: root.to_owned(), revision: revision.map(str::to_owned) }
    }

    fn git(&self) -> Command {
        let mut git = Command::new("git");
        git.arg("-C").arg(&self.root);
        git
    }

    /// The commit a revision names.
    pub fn commit(&self) -> anyhow::Result<String> {
        let Some(revision) = &self.revision else {
            return Ok(String::new());
        };
        let out = self
            .git()
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("{revision}^{{commit}}"))
            .output()
            .with_context(|| format!("running git in {}", self.root.display()))?;
        if !out.status.success() {
            bail!("{} has no tag or commit {revision}", self.root.display());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// One file's text.
    pub fn read(&self, path: &str) -> anyhow::Result<String> {
        match &self.revision {
            Some(revision) => {
                let out = self.git().arg("show").arg(format!("{revision}:{path}")).output().context("git show")?;
                if !out.status.success() {
                    bail!("{} has no {path} at {revision}", self.root.display());
                }
                Ok(decode(out.stdout))
            }
            None => {
                let file = self.root.join(path);
                Ok(decode(std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?))
            }
        }
    }

    /// Every `.cs` file under `under` (a path prefix, "" for all), with its
    /// text, in path order.
    pub fn files(&self, under: &str) -> anyhow::Result<Vec<(String, String)>> {
        match &self.revision {
            Some(revision) => self.files_at(revision, under),
            None => {
                let mut files = Vec::new();
                walk(&self.root, &self.root.join(under), &mut files)?;
                files.sort();
                Ok(files)
            }
        }
    }

    fn files_at(&self, revision: &str, under: &str) -> anyhow::Result<Vec<(String, String)>> {
        let mut list = self.git();
        list.args(["ls-tree", "-r", "-z", "--format=%(objectname) %(path)", revision]);
        if !under.is_empty() {
            list.arg("--").arg(under);
        }
        let listed = list.output().with_context(|| format!("git ls-tree in {}", self.root.display()))?;
        if !listed.status.success() {
            bail!("git ls-tree {revision} in {}: {}", self.root.display(), String::from_utf8_lossy(&listed.stderr));
        }
        let entries: Vec<(String, String)> = listed
            .stdout
            .split(|b| *b == 0)
            .filter_map(|entry| {
                let entry = std::str::from_utf8(entry).ok()?;
                let (object, path) = entry.split_once(' ')?;
                path.ends_with(".cs").then(|| (object.to_owned(), path.to_owned()))
            })
            .collect();
        let mut batch = self
            .git()
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("git cat-file")?;
        let mut stdin = batch.stdin.take().context("git cat-file's stdin")?;
        let objects: Vec<String> = entries.iter().map(|(object, _)| object.clone()).collect();
        // Written from another thread, as git answers while it reads.
        let writer = std::thread::spawn(move || -> std::io::Result<()> {
            for object in objects {
                writeln!(stdin, "{object}")?;
            }
            Ok(())
        });
        let mut reader = BufReader::new(batch.stdout.take().context("git cat-file's stdout")?);
        let mut files = Vec::with_capacity(entries.len());
        for (_, path) in entries {
            let mut header = String::new();
            reader.read_line(&mut header)?;
            let size: usize = header
                .split_whitespace()
                .nth(2)
                .and_then(|s| s.parse().ok())
                .with_context(|| format!("git cat-file answered {header:?} for {path}"))?;
            let mut bytes = vec![0; size + 1];
            reader.read_exact(&mut bytes)?;
            bytes.pop();
            files.push((path, decode(bytes)));
        }
        writer.join().map_err(|_| anyhow::anyhow!("the writer to git cat-file panicked"))??;
        batch.wait()?;
        Ok(files)
    }
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            walk(root, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "cs") {
            let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            files.push((relative, decode(std::fs::read(&path)?)));
        }
    }
    Ok(())
}

/// UTF-8 (a byte-order mark dropped); anything else read as Latin-1, which
/// keeps every ASCII declaration intact.
fn decode(bytes: Vec<u8>) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").map(<[u8]>::to_vec).unwrap_or(bytes);
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => e.into_bytes().iter().map(|b| char::from(*b)).collect(),
    }
}

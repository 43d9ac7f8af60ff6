//! The .NET types mono's profile has, read from its assemblies by a small
//! program run under mono: a signature's .NET names are resolved against
//! them and written in full, like Unity's, so the stubs need no `using`.
//! A name in neither (NUnit 3's, say) is what the stubs leave out.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

use crate::syntax::TypeKind;

/// The assemblies the stubs are compiled with, besides mscorlib.
pub const ASSEMBLIES: &[&str] = &[
    "System.dll",
    "System.Core.dll",
    "System.Numerics.dll",
    "System.Runtime.Serialization.dll",
    "System.Xml.dll",
    "System.Xml.Linq.dll",
];

const LISTER: &str = r#"
using System;
using System.Reflection;
static class ListTypes {
    static void Main(string[] names) {
        foreach (var name in names) {
            var dir = System.IO.Path.GetDirectoryName(typeof(object).Assembly.Location);
            var assembly = name == "mscorlib" ? typeof(object).Assembly : Assembly.LoadFrom(System.IO.Path.Combine(dir, name + ".dll"));
            foreach (var t in assembly.GetExportedTypes()) {
                var kind = t.IsEnum ? "e" : t.IsInterface ? "i" : t.IsValueType ? "s" : typeof(Delegate).IsAssignableFrom(t) ? "d" : "c";
                Console.WriteLine(kind + " " + t.FullName);
            }
        }
    }
}
"#;

/// Every public type of mscorlib and [`ASSEMBLIES`], by key (`System.Collections.Generic.List`1`).
pub fn types(work: &Path) -> anyhow::Result<HashMap<String, TypeKind>> {
    let source = work.join("ListTypes.cs");
    let program = work.join("ListTypes.exe");
    std::fs::write(&source, LISTER)?;
    let built = Command::new("mcs")
        .arg("-nologo")
        .arg(format!("-out:{}", program.display()))
        .arg(&source)
        .output()
        .context("running mcs")?;
    if !built.status.success() {
        bail!("compiling the .NET type lister: {}", String::from_utf8_lossy(&built.stdout));
    }
    let mut run = Command::new("mono");
    run.arg(&program).arg("mscorlib");
    for assembly in ASSEMBLIES {
        run.arg(assembly.trim_end_matches(".dll"));
    }
    let out = run.output().context("running mono (apt-get install mono-runtime)")?;
    if !out.status.success() {
        bail!("listing .NET's types under mono: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut types = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((kind, name)) = line.split_once(' ') else {
            continue;
        };
        let kind = match kind {
            "e" => TypeKind::Enum,
            "i" => TypeKind::Interface,
            "s" => TypeKind::Struct,
            "d" => TypeKind::Delegate,
            _ => TypeKind::Class,
        };
        types.insert(name.to_owned(), kind);
    }
    if types.len() < 1000 {
        bail!("mono listed only {} .NET types", types.len());
    }
    Ok(types)
}

//! The internal Unity members the package reaches by reflection (no
//! compiler checks them), each with the shape the package asks for and what
//! it does where a version lacks it. Found per version in the sources, every
//! accessibility included.
//!
//! Kept in step with the package: `every_lookup_in_the_package_is_a_target`
//! reads its `GetType`/`GetMethod`/`GetField`/`GetProperty`/`GetEvent` calls,
//! and each fallback is tested under mono (Tests~/Core/UnityInternalsTests.cs).

use std::collections::BTreeSet;

use crate::api::{ReflectedMember, ReflectionFound};
use crate::index::Index;
use crate::syntax::{MemberKind, TypeSyntax};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Type,
    Method,
    Field,
    Property,
    Event,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Type => "type",
            Kind::Method => "method",
            Kind::Field => "field",
            Kind::Property => "property",
            Kind::Event => "event",
        }
    }
}

/// What the package looks up, and what it does without it.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub ty: &'static str,
    pub member: Option<&'static str>,
    pub kind: Kind,
    pub is_static: bool,
    /// A method's parameter types, as the package passes them to GetMethod.
    pub params: Option<&'static [&'static str]>,
    /// A field's or property's type, as the package reads it.
    pub value: Option<&'static str>,
    /// Where the package looks it up.
    pub used_by: &'static str,
    /// What the package does where this version lacks it.
    pub fallback: &'static str,
}

impl Target {
    pub fn id(&self) -> String {
        match self.member {
            Some(member) => format!("{}.{member}", self.ty),
            None => self.ty.to_owned(),
        }
    }
}

const CONSOLE: &str = "Editor/Core/UnityInternals.cs ConsoleAccess (bound in Editor/Unity/UnityConsole.cs)";
const NO_CONSOLE: &str = "get-logs and clear-console answer an error naming the missing member (\"this Unity version's console cannot be read\"); every other tool works";
const TICK: &str = "Editor/Core/UnityInternals.cs EditorTick (from Editor/Unity/McpServerController.cs)";

pub const TARGETS: &[Target] = &[
    Target {
        ty: "UnityEditor.LogEntries",
        member: None,
        kind: Kind::Type,
        is_static: true,
        params: None,
        value: None,
        used_by: CONSOLE,
        fallback: NO_CONSOLE,
    },
    Target {
        ty: "UnityEditor.LogEntry",
        member: None,
        kind: Kind::Type,
        is_static: false,
        params: None,
        value: None,
        used_by: CONSOLE,
        fallback: NO_CONSOLE,
    },
    Target {
        ty: "UnityEditor.LogEntries",
        member: Some("StartGettingEntries"),
        kind: Kind::Method,
        is_static: true,
        params: Some(&[]),
        value: None,
        used_by: CONSOLE,
        fallback: NO_CONSOLE,
    },
    Target {
        ty: "UnityEditor.LogEntries",
        member: Some("EndGettingEntries"),
        kind: Kind::Method,
        is_static: true,
        params: Some(&[]),
        value: None,
        used_by: CONSOLE,
        fallback: NO_CONSOLE,
    },
    Target {
        ty: "UnityEditor.LogEntries",
        member: Some("GetEntryInternal"),
        kind: Kind::Method,
        is_static: true,
        params: Some(&["int", "UnityEditor.LogEntry"]),
        value: None,
        used_by: CONSOLE,
        fallback: NO_CONSOLE,
    },
    Target {
        ty: "UnityEditor.LogEntries",
        member: Some("Clear"),
        kind: Kind::Method,
        is_static: true,
        params: Some(&[]),
        value: None,
        used_by: CONSOLE,
        fallback: "clear-console answers an error naming the missing member; reading still works",
    },
    Target {
        ty: "UnityEditor.LogEntries",
        member: Some("consoleFlags"),
        kind: Kind::Property,
        is_static: true,
        params: None,
        value: Some("int"),
        used_by: CONSOLE,
        fallback: "the console is read as the Console window filters it (Collapse and the level toggles as the user set them)",
    },
    Target {
        ty: "UnityEditor.LogEntries",
        member: Some("GetFilteringText"),
        kind: Kind::Method,
        is_static: true,
        params: Some(&[]),
        value: None,
        used_by: CONSOLE,
        fallback: "the console is read as the Console window's search text filters it",
    },
    Target {
        ty: "UnityEditor.LogEntries",
        member: Some("SetFilteringText"),
        kind: Kind::Method,
        is_static: true,
        params: Some(&["string"]),
        value: None,
        used_by: CONSOLE,
        fallback: "the console is read as the Console window's search text filters it",
    },
    Target {
        ty: "UnityEditor.LogEntry",
        member: Some("message"),
        kind: Kind::Field,
        is_static: false,
        params: None,
        value: Some("string"),
        used_by: CONSOLE,
        fallback: NO_CONSOLE,
    },
    Target {
        ty: "UnityEditor.LogEntry",
        member: Some("mode"),
        kind: Kind::Field,
        is_static: false,
        params: None,
        value: Some("int"),
        used_by: CONSOLE,
        fallback: NO_CONSOLE,
    },
    Target {
        ty: "UnityEditor.LogEntry",
        member: Some("callstackTextStartUTF16"),
        kind: Kind::Field,
        is_static: false,
        params: None,
        value: Some("int"),
        used_by: CONSOLE,
        fallback: "the stack trace is split from the message at its first line break (as Unity did before this field)",
    },
    Target {
        ty: "UnityEditor.EditorApplication",
        member: Some("SignalTick"),
        kind: Kind::Method,
        is_static: true,
        params: Some(&[]),
        value: None,
        used_by: TICK,
        fallback: "a request that arrives while the Editor's loop sleeps waits for its next update (up to the throttle interval) instead of waking it",
    },
    Target {
        ty: "UnityEditor.EditorApplication",
        member: Some("tick"),
        kind: Kind::Event,
        is_static: true,
        params: None,
        value: None,
        used_by: TICK,
        fallback: "the main-thread queue is drained from EditorApplication.update only",
    },
];

/// Each target as this version's sources declare it.
pub fn find(index: &Index) -> Vec<ReflectionFound> {
    TARGETS.iter().map(|target| ReflectionFound { target: target.id(), found: found(index, target) }).collect()
}

fn found(index: &Index, target: &Target) -> Vec<ReflectedMember> {
    let parts: Vec<_> = index.parts_of(target.ty).collect();
    let Some(member) = target.member else {
        return parts
            .first()
            .map(|p| {
                let is_static = p.decl.modifiers.iter().any(|m| m == "static");
                vec![ReflectedMember { kind: "type".into(), is_static, ty: String::new(), params: None }]
            })
            .unwrap_or_default();
    };
    let mut out = Vec::new();
    for part in parts {
        for decl in part.decl.members.iter().filter(|m| m.name == member && m.explicit_interface.is_none()) {
            let kind = match decl.kind {
                MemberKind::Method => Kind::Method,
                MemberKind::Field | MemberKind::Constant => Kind::Field,
                MemberKind::Property => Kind::Property,
                MemberKind::Event => Kind::Event,
                _ => continue,
            };
            let context = index.context_of(part, decl.type_params.clone());
            let mut refs = BTreeSet::new();
            let mut plain =
                |ty: &TypeSyntax| index.render(ty, &context, &mut refs).trim_start_matches("global::").to_owned();
            out.push(ReflectedMember {
                kind: kind.name().into(),
                is_static: decl.modifiers.iter().any(|m| m == "static" || m == "const"),
                ty: decl.ty.as_ref().map(&mut plain).unwrap_or_default(),
                params: (kind == Kind::Method).then(|| decl.params.iter().map(|p| plain(&p.ty)).collect()),
            });
        }
    }
    out
}

/// Whether a version's declarations hold the shape the package asks for.
pub fn present(target: &Target, found: &[ReflectedMember]) -> bool {
    found.iter().any(|m| {
        m.kind == target.kind.name()
            && (target.kind == Kind::Type || m.is_static == target.is_static)
            && target.params.is_none_or(|params| m.params.as_deref().is_some_and(|p| p == params))
            && target.value.is_none_or(|value| m.ty == value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reflective lookup in the package's Editor layer names a target
    /// here: a new one cannot go unchecked across versions.
    #[test]
    fn every_lookup_in_the_package_is_a_target() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut names = BTreeSet::new();
        // Every C# file of the Editor layer and of the core, in any folder.
        let mut folders = vec![root.join("Editor/Unity"), root.join("Editor/Core")];
        let mut files = Vec::new();
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "cs") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 20, "{files:?}");
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            for call in ["GetType(\"Unity", "GetMethod(\"", "GetField(\"", "GetProperty(\"", "GetEvent(\""] {
                for (at, _) in text.match_indices(call) {
                    let start = at + call.len() - if call.ends_with("Unity") { 5 } else { 0 };
                    let name: String = text[start..].chars().take_while(|c| *c != '"').collect();
                    names.insert(name);
                }
            }
        }
        // The dynamic-code tool's own compiled snippet, not Unity's.
        names.remove("McpDynamicCode");
        names.remove("Run");
        assert!(names.len() >= 10, "{names:?}");
        for name in names {
            assert!(
                TARGETS.iter().any(|t| t.member == Some(name.as_str()) || t.ty == name),
                "the package looks up {name} by reflection, but reflection.rs does not check it per version"
            );
        }
    }

    #[test]
    fn a_shape_is_present_only_with_its_kind_staticness_and_parameters() {
        let target = TARGETS.iter().find(|t| t.member == Some("GetEntryInternal")).unwrap();
        let method = |is_static, params: &[&str]| ReflectedMember {
            kind: "method".into(),
            is_static,
            ty: "bool".into(),
            params: Some(params.iter().map(|p| (*p).to_owned()).collect()),
        };
        assert!(present(target, &[method(true, &["int", "UnityEditor.LogEntry"])]));
        assert!(!present(target, &[method(false, &["int", "UnityEditor.LogEntry"])]));
        assert!(!present(target, &[method(true, &["int"])]));
        assert!(!present(target, &[]));
    }
}

//! One Unity version's API as data: every visible member of each Unity type
//! the package touches ("full" types), and the shape of each type those
//! members name ("shells": kind, generics, base class, an enum's values, a
//! delegate's signature), with `[Obsolete]` and its level. Facts only —
//! names, types, signatures, flags; no bodies, comments or messages.
//!
//! Written one member per line, so a diff between two versions reads as
//! what Unity changed.

use std::collections::{BTreeMap, BTreeSet};

use crate::index::{Context, Index, Part, param_name};
use crate::source::Origin;
use crate::syntax::{MemberDecl, MemberKind, Obsolete, TypeKind, TypeSyntax};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Api {
    /// The Unity version (`6000.5.2f1`).
    pub unity: String,
    /// Where each part came from: UnityCsReference at its tag, the Test
    /// Framework package at its version.
    pub sources: Vec<Origin>,
    pub generator: String,
    pub types: Vec<ApiType>,
    /// Internal members the package reaches by reflection, as declared.
    pub reflection: Vec<ReflectionFound>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// Every visible member.
    Full,
    /// The type's shape only.
    Shell,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ApiType {
    /// `Namespace.Outer+Inner`, `` `N `` after a generic name.
    pub name: String,
    pub kind: TypeKind,
    pub detail: Detail,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obsolete: Option<Obsolete>,
    pub modifiers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub type_params: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute_usage: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flags: bool,
    /// A class with no visible parameterless constructor (it declares
    /// others, or is a shell): the stub gives it a hidden one, so that the
    /// stubs deriving from it compile, without a public one Unity lacks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden_default_constructor: bool,
    /// A delegate's signature: `void Name(int a)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegate: Option<String>,
    pub parts: Vec<ApiPart>,
}

/// One declaration of the type (partial types have several).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ApiPart {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bases: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<ApiMember>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ApiMember {
    pub kind: ApiMemberKind,
    pub decl: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obsolete: Option<Obsolete>,
    /// Why the stub leaves this member out: what mono's compiler could not
    /// declare (a type from outside Unity and .NET's profile, such as
    /// NUnit 3's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiMemberKind {
    Constructor,
    Field,
    Constant,
    Property,
    Indexer,
    Event,
    Method,
    Operator,
    Conversion,
    #[serde(rename = "enum-member")]
    EnumMember,
}

impl From<MemberKind> for ApiMemberKind {
    fn from(kind: MemberKind) -> Self {
        match kind {
            MemberKind::Constructor => ApiMemberKind::Constructor,
            MemberKind::Field => ApiMemberKind::Field,
            MemberKind::Constant => ApiMemberKind::Constant,
            MemberKind::Property => ApiMemberKind::Property,
            MemberKind::Indexer => ApiMemberKind::Indexer,
            MemberKind::Event => ApiMemberKind::Event,
            MemberKind::Method => ApiMemberKind::Method,
            MemberKind::Operator => ApiMemberKind::Operator,
            MemberKind::Conversion => ApiMemberKind::Conversion,
        }
    }
}

/// A member the package reaches by reflection, as this version declares it
/// (every accessibility); empty `found` when the version has none.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReflectionFound {
    pub target: String,
    pub found: Vec<ReflectedMember>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReflectedMember {
    pub kind: String,
    #[serde(rename = "static")]
    pub is_static: bool,
    /// The field's, property's or event's type; a method's return type.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Vec<String>>,
}

/// Whether a member is visible to a package (another assembly): public,
/// protected (to derived classes), an interface's or an enum's.
pub fn member_visible(member: &MemberDecl, container: TypeKind) -> bool {
    let has = |m: &str| member.modifiers.iter().any(|x| x == m);
    if member.explicit_interface.is_some() {
        return false; // decided by the interface's own visibility
    }
    if container == TypeKind::Interface {
        return !has("private") && !has("internal") && !has("static");
    }
    has("public") || has("protected") && !has("private")
}

/// Builds one version's API from the index: `full` types with every visible
/// member, and a shell for every type they name.
pub fn build(index: &Index, full: &BTreeSet<String>, left_out: &LeftOut) -> BTreeMap<String, ApiType> {
    let full = full_closure(index, full);
    let mut types = BTreeMap::new();
    let mut pending: Vec<String> = Vec::new();
    for key in &full {
        let mut refs = BTreeSet::new();
        if let Some(ty) = api_type(index, key, Detail::Full, left_out, &mut refs) {
            types.insert(key.clone(), ty);
        }
        pending.extend(refs);
    }
    while let Some(key) = pending.pop() {
        if types.contains_key(&key) || !index.is_visible(&key) {
            continue;
        }
        let mut refs = BTreeSet::new();
        if let Some(ty) = api_type(index, &key, Detail::Shell, left_out, &mut refs) {
            types.insert(key.clone(), ty);
        }
        pending.extend(refs);
    }
    types
}

/// The full types and what must be full with them: base classes and
/// Unity's interfaces (their members are the type's too), public nested
/// types (members too); and each full nested type's containers.
pub fn full_closure(index: &Index, seed: &BTreeSet<String>) -> BTreeSet<String> {
    let mut full = BTreeSet::new();
    let mut pending: Vec<String> = seed.iter().cloned().collect();
    while let Some(key) = pending.pop() {
        if !index.is_visible(&key) || !full.insert(key.clone()) {
            continue;
        }
        pending.extend(index.bases(&key).into_iter().filter(|b| index.is_visible(b)));
        let prefix = format!("{key}+");
        pending.extend(
            index.by_key.keys().filter(|k| k.starts_with(&prefix) && !k[prefix.len()..].contains('+')).cloned(),
        );
    }
    full
}

/// Members and bases the stub leaves out (mono's compiler cannot declare
/// them), by type key: member declarations and base texts, with the reason.
#[derive(Debug, Default, Clone)]
pub struct LeftOut {
    pub members: BTreeMap<(String, String), String>,
    pub bases: BTreeMap<(String, String), String>,
}

fn api_type(
    index: &Index,
    key: &str,
    detail: Detail,
    left_out: &LeftOut,
    refs: &mut BTreeSet<String>,
) -> Option<ApiType> {
    if !index.is_visible(key) {
        return None;
    }
    let parts: Vec<&Part> = index.parts_of(key).collect();
    let first = parts.first()?;
    let kind = first.decl.kind;
    // Shells of nested types need their containers.
    if let Some(container) = &first.container {
        refs.insert(container.clone());
    }
    let mut modifiers: Vec<String> = parts
        .iter()
        .flat_map(|p| p.decl.modifiers.iter())
        .filter(|m| {
            matches!(m.as_str(), "public" | "protected" | "static" | "abstract" | "sealed" | "readonly" | "ref")
        })
        .cloned()
        .collect();
    modifiers.dedup();
    // The order C# writes them in (parts may spell them differently).
    modifiers.sort_by_key(|m| {
        ["public", "protected", "static", "abstract", "sealed", "readonly", "ref"].iter().position(|x| x == m)
    });
    modifiers.dedup();
    let mut ty = ApiType {
        name: key.to_owned(),
        kind,
        detail,
        obsolete: parts.iter().find_map(|p| p.decl.obsolete),
        modifiers,
        type_params: first.decl.type_params.clone(),
        // Its arguments name AttributeTargets, in full here as every name is.
        attribute_usage: parts.iter().find_map(|p| p.decl.attribute_usage.as_ref()).map(|usage| {
            usage
                .replace("global::System.AttributeTargets.", "AttributeTargets.")
                .replace("System.AttributeTargets.", "AttributeTargets.")
                .replace("AttributeTargets.", "global::System.AttributeTargets.")
        }),
        flags: parts.iter().any(|p| p.decl.flags),
        hidden_default_constructor: false,
        delegate: None,
        parts: Vec::new(),
    };
    if kind == TypeKind::Delegate {
        let context = index.context_of(first, Vec::new());
        let returns =
            first.decl.returns.as_ref().map(|r| index.render(r, &context, refs)).unwrap_or_else(|| "void".into());
        let params = render_params(index, &first.decl.params, &context, refs);
        let name = &first.decl.name;
        let generics = generics(&first.decl.type_params);
        let constraints = constraints(index, &first.decl.constraints, &context, refs);
        ty.delegate = Some(format!("{returns} {name}{generics}({params}){constraints}"));
        ty.parts.push(ApiPart::default());
        return Some(ty);
    }
    let mut declares_constructors = false;
    let mut visible_default_constructor = false;
    for part in &parts {
        let context = index.context_of(part, Vec::new());
        let mut api_part = ApiPart::default();
        for (i, base) in part.decl.bases.iter().enumerate() {
            let mut base_refs = BTreeSet::new();
            let rendered = index.render(base, &context, &mut base_refs);
            let resolved = match base {
                TypeSyntax::Name(name) => index.lookup(name, &context),
                _ => None,
            };
            let unity_invisible = resolved.as_ref().is_some_and(|k| !index.is_visible(k));
            let is_class_base = match &resolved {
                Some(k) => index.kind_of(k) == Some(TypeKind::Class),
                None => i == 0 && !looks_like_interface(base),
            };
            if left_out.bases.contains_key(&(key.to_owned(), rendered.clone())) {
                // A base mono does not have: an attribute still derives
                // from Attribute (or it could not be used as one).
                if is_class_base && key.ends_with("Attribute") && kind == TypeKind::Class {
                    api_part.bases.insert(0, "global::System.Attribute".into());
                }
                continue;
            }
            let keep = !unity_invisible
                && match (detail, kind) {
                    // An enum's underlying type, an interface's base interfaces.
                    (_, TypeKind::Enum | TypeKind::Interface) => true,
                    (Detail::Full, _) => true,
                    // A shell class keeps its base class only (conversions);
                    // its interfaces would need members it does not have.
                    (Detail::Shell, _) => is_class_base,
                };
            if keep {
                refs.extend(base_refs);
                api_part.bases.push(rendered);
            }
        }
        api_part.constraints = part
            .decl
            .constraints
            .iter()
            .map(|c| index.render_constraint(c, &context, refs))
            .filter(|c| !c.is_empty())
            .collect();
        if kind == TypeKind::Enum {
            let members: BTreeSet<&str> = part.decl.enum_members.iter().map(|(n, _)| n.as_str()).collect();
            for (name, value) in &part.decl.enum_members {
                let decl = match value {
                    Some(value) if enum_value_is_local(value, &members) => format!("{name} = {value}"),
                    _ => name.clone(),
                };
                api_part.members.push(ApiMember {
                    kind: ApiMemberKind::EnumMember,
                    decl,
                    obsolete: None,
                    left_out: None,
                });
            }
        }
        for member in &part.decl.members {
            if member.kind == MemberKind::Constructor && !member.modifiers.iter().any(|m| m == "static") {
                declares_constructors = true;
                if member.params.is_empty() && member_visible(member, kind) {
                    visible_default_constructor = true;
                }
            }
            if detail == Detail::Shell {
                // A shell keeps the conversions (they decide overloads) only.
                if member.kind != MemberKind::Conversion || !member_visible(member, kind) {
                    continue;
                }
            } else if !member_visible(member, kind) && !explicit_implementation_visible(index, member, &context) {
                continue;
            }
            if member.kind == MemberKind::Constructor && member.modifiers.iter().any(|m| m == "static") {
                continue;
            }
            let mut member_refs = BTreeSet::new();
            let decl = render_member(index, part, member, &mut member_refs);
            let left = left_out.members.get(&(key.to_owned(), decl.clone())).cloned();
            if left.is_none() {
                refs.extend(member_refs);
            }
            api_part.members.push(ApiMember {
                kind: member.kind.into(),
                decl,
                obsolete: member.obsolete,
                left_out: left,
            });
        }
        ty.parts.push(api_part);
    }
    let is_class = kind == TypeKind::Class && !ty.modifiers.iter().any(|m| m == "static");
    ty.hidden_default_constructor =
        is_class && (detail == Detail::Shell || declares_constructors && !visible_default_constructor);
    Some(ty)
}

/// An explicit implementation of an interface the package can see (the
/// type does not compile without it).
fn explicit_implementation_visible(index: &Index, member: &MemberDecl, context: &Context<'_>) -> bool {
    match &member.explicit_interface {
        Some(TypeSyntax::Name(name)) => index.lookup(name, context).is_none_or(|key| index.is_visible(&key)),
        Some(_) => true,
        None => false,
    }
}

/// `IFoo`, by .NET's naming rule (for a base the sources do not declare).
fn looks_like_interface(base: &TypeSyntax) -> bool {
    let TypeSyntax::Name(name) = base else {
        return false;
    };
    let last = name.segments.last().map(|s| s.name.as_str()).unwrap_or_default();
    let mut chars = last.chars();
    chars.next() == Some('I') && chars.next().is_some_and(char::is_uppercase)
}

/// Whether an enum member's value names only literals and the enum's own members.
fn enum_value_is_local(value: &str, members: &BTreeSet<&str>) -> bool {
    value
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .all(|w| members.contains(w))
}

fn generics(type_params: &[String]) -> String {
    if type_params.is_empty() { String::new() } else { format!("<{}>", type_params.join(", ")) }
}

fn constraints(
    index: &Index,
    constraints: &[crate::syntax::Constraint],
    context: &Context<'_>,
    refs: &mut BTreeSet<String>,
) -> String {
    constraints
        .iter()
        .map(|c| index.render_constraint(c, context, refs))
        .filter(|c| !c.is_empty())
        .map(|c| format!(" {c}"))
        .collect()
}

fn render_params(
    index: &Index,
    params: &[crate::syntax::Param],
    context: &Context<'_>,
    refs: &mut BTreeSet<String>,
) -> String {
    params
        .iter()
        .map(|p| {
            let modifiers: Vec<&str> = p
                .modifiers
                .iter()
                .map(String::as_str)
                .filter(|m| matches!(*m, "this" | "ref" | "out" | "in" | "params"))
                .collect();
            let ty = index.render(&p.ty, context, refs);
            let mut text = if modifiers.is_empty() {
                format!("{ty} {}", p.name)
            } else {
                format!("{} {ty} {}", modifiers.join(" "), p.name)
            };
            if let Some(default) = &p.default {
                text.push_str(" = ");
                text.push_str(default);
            }
            text
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A member's declaration, without body, every Unity type written in full:
/// `public static T[] FindObjectsOfTypeAll<T>() where T : global::UnityEngine.Object`.
pub fn render_member(index: &Index, part: &Part, member: &MemberDecl, refs: &mut BTreeSet<String>) -> String {
    let type_params: Vec<String> = member.type_params.iter().map(|t| param_name(t).to_owned()).collect();
    let context = index.context_of(part, type_params);
    let modifiers: Vec<&str> = member
        .modifiers
        .iter()
        .map(String::as_str)
        .filter(|m| {
            matches!(
                *m,
                "public"
                    | "protected"
                    | "static"
                    | "abstract"
                    | "virtual"
                    | "override"
                    | "sealed"
                    | "new"
                    | "const"
                    | "readonly"
                    | "volatile"
                    | "unsafe"
                    | "implicit"
                    | "explicit"
            )
        })
        // A readonly member (C# 8) is not a readonly field.
        .filter(|m| *m != "readonly" || member.kind == MemberKind::Field)
        .collect();
    let mut head = modifiers.join(" ");
    if !head.is_empty() {
        head.push(' ');
    }
    let ty = member.ty.as_ref().map(|t| index.render(t, &context, refs)).unwrap_or_default();
    let explicit =
        member.explicit_interface.as_ref().map(|i| format!("{}.", index.render(i, &context, refs))).unwrap_or_default();
    let params = render_params(index, &member.params, &context, refs);
    let constraints = constraints(index, &member.constraints, &context, refs);
    let generics = generics(&member.type_params);
    match member.kind {
        MemberKind::Constructor => format!("{head}{}({params})", part.decl.name),
        MemberKind::Method => format!("{head}{ty} {explicit}{}{generics}({params}){constraints}", member.name),
        MemberKind::Operator => format!("{head}{ty} operator {}({params})", member.name),
        MemberKind::Conversion => format!("{head}{} operator {ty}({params})", member.name),
        MemberKind::Field => format!("{head}{ty} {}", member.name),
        MemberKind::Constant => {
            let value = member.value.as_deref().unwrap_or("default");
            format!("{head}{ty} {} = {value}", member.name)
        }
        MemberKind::Event => format!("{head}event {ty} {explicit}{}", member.name),
        MemberKind::Property | MemberKind::Indexer => {
            let accessors: Vec<String> = member
                .accessors
                .iter()
                .filter(|(_, mods)| {
                    !mods.iter().any(|m| m == "private" || m == "internal") || mods.iter().any(|m| m == "protected")
                })
                // An init accessor is a setter to mcs (C# 9).
                .map(|(name, mods)| {
                    let name = if name == "init" { "set" } else { name.as_str() };
                    let mods: Vec<&str> = mods.iter().map(String::as_str).filter(|m| *m == "protected").collect();
                    if mods.is_empty() { format!("{name};") } else { format!("{} {name};", mods.join(" ")) }
                })
                .collect();
            let name = if member.kind == MemberKind::Indexer { format!("this[{params}]") } else { member.name.clone() };
            format!("{head}{ty} {explicit}{name} {{ {} }}", accessors.join(" "))
        }
    }
}

impl Api {
    /// The committed form: one type header, one part header and one member
    /// per line, so that a diff between versions reads as Unity's changes.
    pub fn to_json(&self) -> anyhow::Result<String> {
        let mut out = String::from("{\n");
        let field = |name: &str, value: &serde_json::Value| {
            format!("  {}: {}", serde_json::to_string(name).unwrap_or_default(), value)
        };
        out.push_str(&field("unity", &self.unity.clone().into()));
        out.push_str(",\n  \"sources\": [\n");
        let sources: Vec<String> = self
            .sources
            .iter()
            .map(|s| serde_json::to_string(s).map(|s| format!("    {s}")))
            .collect::<Result<_, _>>()?;
        out.push_str(&sources.join(",\n"));
        out.push_str("\n  ],\n");
        out.push_str(&field("generator", &self.generator.clone().into()));
        out.push_str(",\n  \"types\": [\n");
        let mut types = Vec::new();
        for ty in &self.types {
            let mut header = serde_json::to_value(ty)?;
            if let Some(object) = header.as_object_mut() {
                object.remove("parts");
            }
            let header = serde_json::to_string(&header)?;
            let mut text = format!("    {},\"parts\": [\n", header.trim_end_matches('}'));
            let mut parts = Vec::new();
            for part in &ty.parts {
                let mut head = serde_json::to_value(part)?;
                if let Some(object) = head.as_object_mut() {
                    object.remove("members");
                }
                let head = serde_json::to_string(&head)?;
                let head = head.trim_end_matches('}');
                let separator = if head.len() > 1 { "," } else { "" };
                let members: Vec<String> = part
                    .members
                    .iter()
                    .map(|m| serde_json::to_string(m).map(|m| format!("        {m}")))
                    .collect::<Result<_, _>>()?;
                parts.push(if members.is_empty() {
                    format!("      {head}}}")
                } else {
                    format!("      {head}{separator}\"members\": [\n{}\n      ]}}", members.join(",\n"))
                });
            }
            text.push_str(&parts.join(",\n"));
            text.push_str("\n    ]}");
            types.push(text);
        }
        out.push_str(&types.join(",\n"));
        out.push_str("\n  ],\n  \"reflection\": [\n");
        let reflection: Vec<String> = self
            .reflection
            .iter()
            .map(|r| serde_json::to_string(r).map(|r| format!("    {r}")))
            .collect::<Result<_, _>>()?;
        out.push_str(&reflection.join(",\n"));
        out.push_str("\n  ]\n}\n");
        // What is written must read back as it was.
        let back: Api = serde_json::from_str(&out)?;
        anyhow::ensure!(
            serde_json::to_value(&back)? == serde_json::to_value(self)?,
            "the API does not read back as written"
        );
        Ok(out)
    }
}

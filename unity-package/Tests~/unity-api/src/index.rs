//! Every type the sources declare, by name, and C#'s name lookup over them:
//! a type name in a signature is resolved as the compiler would (type
//! parameters, nested types of the enclosing types and their bases, the
//! enclosing namespaces, then `using` directives and aliases) and written
//! back fully qualified (`global::UnityEngine.Object`). A name the sources do
//! not declare (a .NET type) is left as written, for the declaring file's own
//! `using` directives to resolve.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::syntax::{Constraint, ConstraintClause, NameSyntax, Scope, TypeDecl, TypeKind, TypeSyntax};

/// One declaration of a type (a partial type has one per part).
#[derive(Debug)]
pub struct Part {
    /// The type's key: `Namespace.Outer+Inner`, with `` `N `` after a
    /// generic name (as the CLR names types).
    pub key: String,
    pub namespace: String,
    /// The key of the type this one is nested in.
    pub container: Option<String>,
    pub scope: Arc<Scope>,
    /// The declaration, without its nested types (they are parts of their own).
    pub decl: TypeDecl,
    pub file: String,
}

/// The parts of every type, by key, and every namespace declared.
#[derive(Debug, Default)]
pub struct Index {
    pub parts: Vec<Part>,
    pub by_key: HashMap<String, Vec<usize>>,
    pub namespaces: HashSet<String>,
    /// .NET's types (from mono's profile), by key, and their namespaces.
    pub external: HashMap<String, TypeKind>,
    bases: RefCell<HashMap<String, Vec<String>>>,
}

/// Where a name is looked up: the declaring file's scope, the types it is
/// nested in (innermost last) and the type parameters in scope.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    pub scope: &'a Scope,
    pub enclosing: Vec<String>,
    pub type_params: Vec<String>,
}

impl Index {
    /// Adds .NET's types: names the sources do not declare resolve to them.
    pub fn add_external(&mut self, types: HashMap<String, TypeKind>) {
        for key in types.keys() {
            let outermost = key.split('+').next().unwrap_or(key);
            let mut namespace = String::new();
            if let Some((ns, _)) = outermost.rsplit_once('.') {
                for part in ns.split('.') {
                    namespace = join(&namespace, part);
                    self.namespaces.insert(namespace.clone());
                }
            }
        }
        self.external = types;
    }

    /// Whether a key is one of .NET's types.
    pub fn is_external(&self, key: &str) -> bool {
        self.external.contains_key(key) && !self.by_key.contains_key(key)
    }

    pub fn add_file(&mut self, file: &str, types: Vec<(Scope, TypeDecl)>) {
        for (scope, decl) in types {
            let scope = Arc::new(scope);
            let namespace = scope.levels.last().map(|l| l.namespace.clone()).unwrap_or_default();
            for level in &scope.levels {
                if !level.namespace.is_empty() {
                    self.namespaces.insert(level.namespace.clone());
                }
            }
            self.add_type(file, &scope, &namespace, None, decl);
        }
    }

    fn add_type(
        &mut self,
        file: &str,
        scope: &Arc<Scope>,
        namespace: &str,
        container: Option<&str>,
        mut decl: TypeDecl,
    ) {
        let name = metadata_name(&decl.name, decl.type_params.len());
        let key = match container {
            Some(container) => format!("{container}+{name}"),
            None if namespace.is_empty() => name,
            None => format!("{namespace}.{name}"),
        };
        let nested = std::mem::take(&mut decl.nested);
        for inner in nested {
            self.add_type(file, scope, namespace, Some(&key), inner);
        }
        self.by_key.entry(key.clone()).or_default().push(self.parts.len());
        self.parts.push(Part {
            key,
            namespace: namespace.to_owned(),
            container: container.map(str::to_owned),
            scope: Arc::clone(scope),
            decl,
            file: file.to_owned(),
        });
    }

    pub fn parts_of(&self, key: &str) -> impl Iterator<Item = &Part> {
        self.by_key.get(key).into_iter().flatten().map(|i| &self.parts[*i])
    }

    pub fn kind_of(&self, key: &str) -> Option<TypeKind> {
        self.parts_of(key).next().map(|p| p.decl.kind).or_else(|| self.external.get(key).copied())
    }

    /// Whether a type by this key is visible outside Unity's assemblies:
    /// public (or protected, nested) all the way out. A partial type's
    /// accessibility may be written on any one of its parts.
    pub fn is_visible(&self, key: &str) -> bool {
        if self.is_external(key) {
            return true;
        }
        let mut parts = self.parts_of(key).peekable();
        let Some(first) = parts.peek() else {
            return false;
        };
        let container = first.container.clone();
        let nested = container.is_some();
        parts.any(|p| type_visible(&p.decl.modifiers, nested)) && container.is_none_or(|c| self.is_visible(&c))
    }

    fn exists(&self, key: &str) -> bool {
        self.by_key.contains_key(key) || self.external.contains_key(key)
    }

    /// The keys of a type's base class and interfaces, as declared in its parts.
    pub fn bases(&self, key: &str) -> Vec<String> {
        if let Some(bases) = self.bases.borrow().get(key) {
            return bases.clone();
        }
        // While a type's bases are being resolved it has none (a cycle
        // through nested lookups ends here).
        self.bases.borrow_mut().insert(key.to_owned(), Vec::new());
        let mut bases = Vec::new();
        for part in self.parts_of(key) {
            // A base list is read outside the type's own body: its
            // containers are in scope, its own nested types are not.
            let mut context = self.context_of(part, Vec::new());
            context.enclosing.pop();
            for base in &part.decl.bases {
                if let TypeSyntax::Name(name) = base {
                    if let Some(found) = self.lookup(name, &context) {
                        if !bases.contains(&found) {
                            bases.push(found);
                        }
                    }
                }
            }
        }
        self.bases.borrow_mut().insert(key.to_owned(), bases.clone());
        bases
    }

    /// The context a part's own declarations are written in.
    pub fn context_of<'a>(&self, part: &'a Part, mut type_params: Vec<String>) -> Context<'a> {
        let mut enclosing = Vec::new();
        let mut current = Some(part.key.clone());
        while let Some(key) = current {
            current = self.parts_of(&key).next().and_then(|p| p.container.clone());
            for p in self.parts_of(&key).take(1) {
                type_params.extend(p.decl.type_params.iter().map(|t| param_name(t).to_owned()));
            }
            enclosing.insert(0, key);
        }
        Context { scope: &part.scope, enclosing, type_params }
    }

    /// The key of the type a name refers to, if the sources declare it.
    pub fn lookup(&self, name: &NameSyntax, context: &Context<'_>) -> Option<String> {
        let first = name.segments.first()?;
        let (mut key, mut used) = match name.alias.as_deref() {
            Some("global") => self.in_namespace("", name)?,
            Some(_) => return None,
            None if first.args.is_empty() && context.type_params.contains(&first.name) => return None,
            None => match self.simple(&first.name, first.args.len(), context) {
                Some(key) => (key, 1),
                None => self.qualified(name, context)?,
            },
        };
        // The rest are nested types.
        while let Some(segment) = name.segments.get(used) {
            key = self.nested(&key, &segment.name, segment.args.len())?;
            used += 1;
        }
        Some(key)
    }

    /// `A.B.C` where `A.B` is a namespace (relative to an enclosing one).
    fn qualified(&self, name: &NameSyntax, context: &Context<'_>) -> Option<(String, usize)> {
        for level in context.scope.levels.iter().rev() {
            if let Some(found) = self.in_namespace(&level.namespace, name) {
                return Some(found);
            }
        }
        None
    }

    /// The longest run of `name`'s segments that is a namespace under
    /// `base`, then the type after it; and how many segments that used.
    fn in_namespace(&self, base: &str, name: &NameSyntax) -> Option<(String, usize)> {
        let mut namespace = base.to_owned();
        for (i, segment) in name.segments.iter().enumerate() {
            let key = join(&namespace, &metadata_name(&segment.name, segment.args.len()));
            if self.exists(&key) {
                return Some((key, i + 1));
            }
            let inner = join(&namespace, &segment.name);
            if !segment.args.is_empty() || !self.namespaces.contains(&inner) {
                return None;
            }
            namespace = inner;
        }
        None
    }

    fn nested(&self, container: &str, name: &str, arity: usize) -> Option<String> {
        let mut seen = HashSet::new();
        let mut pending = vec![container.to_owned()];
        while let Some(current) = pending.pop() {
            if !seen.insert(current.clone()) {
                continue;
            }
            let key = format!("{current}+{}", metadata_name(name, arity));
            if self.exists(&key) {
                return Some(key);
            }
            // Nested types are inherited.
            if self.kind_of(&current) == Some(TypeKind::Class) {
                pending.extend(self.bases(&current).into_iter().filter(|b| self.kind_of(b) == Some(TypeKind::Class)));
            }
        }
        None
    }

    /// A one-segment name, by C#'s lookup order.
    fn simple(&self, name: &str, arity: usize, context: &Context<'_>) -> Option<String> {
        for container in context.enclosing.iter().rev() {
            if let Some(found) = self.nested(container, name, arity) {
                return Some(found);
            }
        }
        let metadata = metadata_name(name, arity);
        for (depth, level) in context.scope.levels.iter().enumerate().rev() {
            let key = join(&level.namespace, &metadata);
            if self.exists(&key) {
                return Some(key);
            }
            if arity == 0 {
                if let Some((_, target)) = level.aliases.iter().find(|(alias, _)| alias == name) {
                    let outer = Scope { levels: context.scope.levels[..depth].to_vec() };
                    let outer = Context { scope: &outer, enclosing: Vec::new(), type_params: Vec::new() };
                    return match target {
                        TypeSyntax::Name(target) => self.lookup(target, &outer),
                        _ => None,
                    };
                }
            }
            let mut candidates: Vec<String> = level
                .usings
                .iter()
                .map(|using| join(&using_namespace(using), &metadata))
                .filter(|key| self.exists(key))
                .collect();
            if candidates.len() > 1 {
                // Only one can be visible where the file compiles.
                candidates.retain(|key| self.is_visible(key));
            }
            if let Some(found) = candidates.into_iter().next() {
                return Some(found);
            }
        }
        None
    }

    /// The alias a name is, if it is one of the scope's aliases (to a .NET type).
    pub fn alias_target<'a>(&self, name: &str, context: &'a Context<'_>) -> Option<&'a TypeSyntax> {
        context.scope.levels.iter().rev().flat_map(|l| l.aliases.iter()).find(|(a, _)| a == name).map(|(_, t)| t)
    }

    /// `ty` written fully qualified, with every type from the sources it
    /// names added to `refs`.
    pub fn render(&self, ty: &TypeSyntax, context: &Context<'_>, refs: &mut BTreeSet<String>) -> String {
        match ty {
            TypeSyntax::Predefined(name) => name.clone(),
            TypeSyntax::Name(name) => self.render_name(name, context, refs),
            TypeSyntax::Array(element, rank) => format!("{}{rank}", self.render(element, context, refs)),
            TypeSyntax::Nullable(inner) => {
                let rendered = self.render(inner, context, refs);
                // `string?` under `#nullable enable` is `string` to the compiler.
                if self.is_reference_type(inner, context) { rendered } else { format!("{rendered}?") }
            }
            TypeSyntax::Pointer(inner) => format!("{}*", self.render(inner, context, refs)),
            TypeSyntax::Tuple(elements) => {
                let parts: Vec<String> = elements
                    .iter()
                    .map(|(ty, name)| {
                        let ty = self.render(ty, context, refs);
                        match name {
                            Some(name) => format!("{ty} {name}"),
                            None => ty,
                        }
                    })
                    .collect();
                format!("({})", parts.join(", "))
            }
            TypeSyntax::Ref { readonly, inner } => {
                let inner = self.render(inner, context, refs);
                if *readonly { format!("ref readonly {inner}") } else { format!("ref {inner}") }
            }
            TypeSyntax::Unsupported(text) => text.clone(),
        }
    }

    fn render_name(&self, name: &NameSyntax, context: &Context<'_>, refs: &mut BTreeSet<String>) -> String {
        let args = |segment: &crate::syntax::Segment, refs: &mut BTreeSet<String>| -> String {
            if segment.args.is_empty() {
                return String::new();
            }
            let args: Vec<String> = segment.args.iter().map(|a| self.render(a, context, refs)).collect();
            format!("<{}>", args.join(", "))
        };
        if let Some(key) = self.lookup(name, context) {
            if !self.is_external(&key) {
                refs.insert(key.clone());
            }
            // The key's namespace, then each type level with the arguments
            // written (the last segments of the name are the innermost types).
            let levels = type_levels(&key);
            let namespace = key_namespace(self, &key);
            let mut out = if namespace.is_empty() { "global::".to_owned() } else { format!("global::{namespace}.") };
            let written = name.segments.len();
            for (i, level) in levels.iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                out.push_str(level.0);
                // Levels the name wrote carry its arguments; outer levels it
                // left implicit (a nested type named from inside its generic
                // container) take the container's own type parameters.
                let from_end = levels.len() - i;
                if from_end <= written {
                    out.push_str(&args(&name.segments[written - from_end], refs));
                } else if level.1 > 0 {
                    let params: Vec<String> = self
                        .parts_of(&levels_key(&key, i))
                        .next()
                        .map(|p| p.decl.type_params.iter().map(|t| param_name(t).to_owned()).collect())
                        .unwrap_or_default();
                    out.push_str(&format!("<{}>", params.join(", ")));
                }
            }
            return out;
        }
        // A type parameter, or a name the sources do not declare: as written.
        if name.alias.is_none() && name.segments.len() == 1 {
            if let Some(TypeSyntax::Name(target)) = self.alias_target(&name.segments[0].name, context) {
                // An alias to a .NET type: its target (aliases are not emitted).
                let target = target.clone();
                return self.render_name(&target, context, refs);
            }
        }
        let mut out = name.alias.as_ref().map(|a| format!("{a}::")).unwrap_or_default();
        for (i, segment) in name.segments.iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            out.push_str(&segment.name);
            out.push_str(&args(segment, refs));
        }
        out
    }

    /// Whether `T?` is a nullable reference (no `Nullable<T>`): a class,
    /// interface or delegate from the sources, or `string`/`object`.
    fn is_reference_type(&self, ty: &TypeSyntax, context: &Context<'_>) -> bool {
        match ty {
            TypeSyntax::Predefined(name) => matches!(name.as_str(), "string" | "object" | "dynamic"),
            TypeSyntax::Array(..) => true,
            TypeSyntax::Name(name) => match self.lookup(name, context) {
                Some(key) => !matches!(self.kind_of(&key), Some(TypeKind::Struct | TypeKind::Enum)),
                // A type parameter: `T?` on an unconstrained one is `T` to mcs.
                None => name.segments.len() == 1 && context.type_params.contains(&name.segments[0].name),
            },
            _ => false,
        }
    }

    /// A constraint clause written fully qualified.
    pub fn render_constraint(
        &self,
        constraint: &Constraint,
        context: &Context<'_>,
        refs: &mut BTreeSet<String>,
    ) -> String {
        let clauses: Vec<String> = constraint
            .clauses
            .iter()
            .map(|clause| match clause {
                // mcs has no `unmanaged` (C# 7.3): `struct` is the closest it reads.
                ConstraintClause::Keyword(k) if k == "unmanaged" => "struct".to_owned(),
                ConstraintClause::Keyword(k) if k == "notnull" => String::new(),
                ConstraintClause::Keyword(k) => k.clone(),
                ConstraintClause::Type(ty) => self.render(ty, context, refs),
            })
            .filter(|c| !c.is_empty())
            .collect();
        if clauses.is_empty() {
            return String::new();
        }
        format!("where {} : {}", constraint.param, clauses.join(", "))
    }
}

/// `Name` or ``Name`N``.
pub fn metadata_name(name: &str, arity: usize) -> String {
    if arity == 0 { name.to_owned() } else { format!("{name}`{arity}") }
}

/// A type parameter's name without its variance.
pub fn param_name(param: &str) -> &str {
    param.rsplit(' ').next().unwrap_or(param)
}

fn join(namespace: &str, name: &str) -> String {
    if namespace.is_empty() { name.to_owned() } else { format!("{namespace}.{name}") }
}

fn using_namespace(using: &NameSyntax) -> String {
    using.segments.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(".")
}

/// A key's type levels, outermost first: each name and its arity.
pub fn type_levels(key: &str) -> Vec<(&str, usize)> {
    let outermost = key.split('+').next().unwrap_or(key);
    let outermost_start = outermost.rfind('.').map_or(0, |dot| dot + 1);
    key[outermost_start..]
        .split('+')
        .map(|level| match level.split_once('`') {
            Some((name, arity)) => (name, arity.parse().unwrap_or(0)),
            None => (level, 0),
        })
        .collect()
}

/// The key of the `depth`-th level (0: outermost) of a nested key.
fn levels_key(key: &str, depth: usize) -> String {
    key.split('+').take(depth + 1).collect::<Vec<_>>().join("+")
}

fn key_namespace(index: &Index, key: &str) -> String {
    match index.parts_of(key).next() {
        Some(part) => part.namespace.clone(),
        None => {
            let outermost = key.split('+').next().unwrap_or(key);
            outermost.rsplit_once('.').map(|(ns, _)| ns.to_owned()).unwrap_or_default()
        }
    }
}

/// Whether a type with these modifiers is visible from another assembly
/// (its container's visibility aside).
fn type_visible(modifiers: &[String], nested: bool) -> bool {
    let has = |m: &str| modifiers.iter().any(|x| x == m);
    if has("public") {
        return true;
    }
    // `protected` and `protected internal` nested types are visible to derived classes.
    nested && has("protected") && !has("private")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn index(files: &[(&str, &str)]) -> Index {
        let mut index = Index::default();
        for (name, source) in files {
            index.add_file(name, parse(source).unwrap().types);
        }
        index
    }

    fn rendered(index: &Index, key: &str, member: &str) -> (String, BTreeSet<String>) {
        let part = index.parts_of(key).next().unwrap();
        let member = part.decl.members.iter().find(|m| m.name == member).unwrap();
        let context = index.context_of(part, member.type_params.clone());
        let mut refs = BTreeSet::new();
        let text = index.render(member.ty.as_ref().unwrap(), &context, &mut refs);
        (text, refs)
    }

    #[test]
    fn names_resolve_as_the_compiler_resolves_them() {
        let index = index(&[
            (
                "a.cs",
                "namespace UnityEngine { public class Object {} public class Transform : Object { public class Inner {} } }",
            ),
            (
                "b.cs",
                "using System.Collections.Generic; using UnityEngine; using TF = UnityEngine.Transform;\n\
                 namespace UnityEditor.Search { public class Item : Transform {\n\
                   public Object A; public List<Object> B; public Inner C; public TF D; public Object[] E;\n\
                   public UnityEngine.Transform.Inner F; public T G<T>() { return default; } public Search.Item H;\n\
                 } }",
            ),
        ]);
        let key = "UnityEditor.Search.Item";
        assert_eq!(rendered(&index, key, "A").0, "global::UnityEngine.Object");
        let (b, refs) = rendered(&index, key, "B");
        assert_eq!(b, "List<global::UnityEngine.Object>");
        assert_eq!(refs.into_iter().collect::<Vec<_>>(), ["UnityEngine.Object"]);
        assert_eq!(rendered(&index, key, "C").0, "global::UnityEngine.Transform.Inner");
        assert_eq!(rendered(&index, key, "D").0, "global::UnityEngine.Transform");
        assert_eq!(rendered(&index, key, "E").0, "global::UnityEngine.Object[]");
        assert_eq!(rendered(&index, key, "F").0, "global::UnityEngine.Transform.Inner");
        assert_eq!(rendered(&index, key, "G").0, "T");
        assert_eq!(rendered(&index, key, "H").0, "global::UnityEditor.Search.Item");
    }

    #[test]
    fn a_nested_type_of_a_generic_container_keeps_its_parameters() {
        let index =
            index(&[("a.cs", "namespace N { public class Box<T> { public class Inner {} public Inner Get; } }")]);
        assert_eq!(rendered(&index, "N.Box`1", "Get").0, "global::N.Box<T>.Inner");
        assert_eq!(type_levels("N.M.Box`1+Inner"), [("Box", 1), ("Inner", 0)]);
    }
}

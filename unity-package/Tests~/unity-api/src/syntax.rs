//! One C# file's declarations, as tree-sitter's C# grammar parses them:
//! namespaces and their `using` directives, types, and each type's members
//! with their signatures. Bodies, comments and message texts are never read.

use tree_sitter::{Node, Parser};

/// A type as written in a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeSyntax {
    /// `int`, `string`, `void`, `object`, `dynamic` …
    Predefined(String),
    Name(NameSyntax),
    Array(Box<TypeSyntax>, String),
    Nullable(Box<TypeSyntax>),
    Pointer(Box<TypeSyntax>),
    Tuple(Vec<(TypeSyntax, Option<String>)>),
    Ref {
        readonly: bool,
        inner: Box<TypeSyntax>,
    },
    /// What no stub can declare (function pointers, `var`): kept as written.
    Unsupported(String),
}

/// `A.B<C>.D`, `global::A.B`, `alias::B`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameSyntax {
    pub alias: Option<String>,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub name: String,
    pub args: Vec<TypeSyntax>,
}

/// The namespaces and `using` directives around a declaration, outermost
/// first: the compilation unit (namespace ""), then each namespace block.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub levels: Vec<Level>,
}

#[derive(Debug, Clone, Default)]
pub struct Level {
    /// This level's full namespace name ("" for the compilation unit).
    pub namespace: String,
    pub usings: Vec<NameSyntax>,
    pub aliases: Vec<(String, TypeSyntax)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TypeKind {
    Class,
    Struct,
    Interface,
    Enum,
    Delegate,
}

/// `[Obsolete]` and its level: a warning (CS0618) or an error (CS0619).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Obsolete {
    Warning,
    Error,
}

#[derive(Debug, Clone)]
pub struct TypeDecl {
    pub name: String,
    pub kind: TypeKind,
    pub modifiers: Vec<String>,
    /// `T`, `in T`, `out T`.
    pub type_params: Vec<String>,
    pub bases: Vec<TypeSyntax>,
    pub constraints: Vec<Constraint>,
    pub obsolete: Option<Obsolete>,
    /// `[AttributeUsage(…)]`'s arguments, as written.
    pub attribute_usage: Option<String>,
    pub flags: bool,
    pub members: Vec<MemberDecl>,
    pub nested: Vec<TypeDecl>,
    /// A delegate's signature.
    pub returns: Option<TypeSyntax>,
    pub params: Vec<Param>,
    /// An enum's members and their values as written.
    pub enum_members: Vec<(String, Option<String>)>,
    pub line: usize,
    /// Declarations tree-sitter could not parse inside this type (its own
    /// header and members, not nested types').
    pub parse_errors: usize,
}

#[derive(Debug, Clone)]
pub struct Constraint {
    pub param: String,
    pub clauses: Vec<ConstraintClause>,
}

#[derive(Debug, Clone)]
pub enum ConstraintClause {
    /// `class`, `struct`, `new()`, `unmanaged`, `notnull`.
    Keyword(String),
    Type(TypeSyntax),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemberKind {
    Constructor,
    Field,
    Constant,
    Property,
    Indexer,
    Event,
    Method,
    Operator,
    Conversion,
}

#[derive(Debug, Clone)]
pub struct MemberDecl {
    pub kind: MemberKind,
    pub name: String,
    pub modifiers: Vec<String>,
    pub explicit_interface: Option<TypeSyntax>,
    pub type_params: Vec<String>,
    pub constraints: Vec<Constraint>,
    /// The return, property, field or event type.
    pub ty: Option<TypeSyntax>,
    pub params: Vec<Param>,
    /// `get`, `set`, `init`, `add`, `remove`, each with its own access
    /// modifiers.
    pub accessors: Vec<(String, Vec<String>)>,
    pub obsolete: Option<Obsolete>,
    /// A constant's value as written.
    pub value: Option<String>,
    /// Whether a field-like event or auto-property (no accessor bodies).
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct Param {
    /// `this`, `ref`, `out`, `in`, `params`.
    pub modifiers: Vec<String>,
    pub ty: TypeSyntax,
    pub name: String,
    pub default: Option<String>,
}

/// A file's declarations: each top-level type with the scope it is declared in.
#[derive(Debug, Default)]
pub struct FileDecls {
    pub types: Vec<(Scope, TypeDecl)>,
}

/// Parses one (already preprocessed) C# file.
pub fn parse(source: &str) -> Result<FileDecls, String> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_c_sharp::LANGUAGE.into()).map_err(|e| format!("tree-sitter's C# grammar: {e}"))?;
    let tree = parser.parse(source, None).ok_or("tree-sitter returned no tree")?;
    let mut out = FileDecls::default();
    let reader = Reader { source: source.as_bytes() };
    let root = tree.root_node();
    let scope = Scope { levels: vec![Level::default()] };
    reader.declarations(root, scope, &mut out);
    Ok(out)
}

struct Reader<'a> {
    source: &'a [u8],
}

impl Reader<'_> {
    fn text(&self, node: Node<'_>) -> String {
        node.utf8_text(self.source).unwrap_or_default().to_owned()
    }

    /// The declarations under a compilation unit or a namespace's body.
    ///
    /// Tree-sitter's recovery from a construct it cannot parse (a pointer
    /// cast in a method body, `*(uint*)&value`) can wrap a whole namespace in
    /// an ERROR node: its declarations are read from inside it, the
    /// `namespace` keyword and name still in order among its children.
    fn declarations(&self, parent: Node<'_>, mut scope: Scope, out: &mut FileDecls) {
        let mut cursor = parent.walk();
        let children: Vec<Node<'_>> = parent.children(&mut cursor).collect();
        let mut i = 0;
        while i < children.len() {
            let child = children[i];
            i += 1;
            match child.kind() {
                "using_directive" => self.using(child, &mut scope),
                "namespace_declaration" => {
                    let inner = self.enter_namespace(child, &scope);
                    if let Some(body) = child.child_by_field_name("body") {
                        self.declarations(body, inner, out);
                    }
                }
                "file_scoped_namespace_declaration" => {
                    // Everything after it in this unit is inside it.
                    scope = self.enter_namespace(child, &scope);
                }
                "namespace" if parent.is_error() => {
                    if let Some(name) = children.get(i).filter(|n| matches!(n.kind(), "identifier" | "qualified_name"))
                    {
                        scope = self.enter_namespace_named(&self.text(*name), &scope);
                        i += 1;
                    }
                }
                "declaration_list" | "ERROR" => self.declarations(child, scope.clone(), out),
                kind if is_type_declaration(kind) => {
                    if let Some(decl) = self.type_decl(child) {
                        out.types.push((scope.clone(), decl));
                    }
                }
                _ => {}
            }
        }
    }

    fn enter_namespace(&self, node: Node<'_>, scope: &Scope) -> Scope {
        let name = node.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
        self.enter_namespace_named(&name, scope)
    }

    fn enter_namespace_named(&self, name: &str, scope: &Scope) -> Scope {
        let mut inner = scope.clone();
        let outer = scope.levels.last().map(|l| l.namespace.clone()).unwrap_or_default();
        // `namespace A.B { }` is `namespace A { namespace B { } }`.
        let mut full = outer;
        for part in name.split('.').map(str::trim) {
            full = if full.is_empty() { part.to_owned() } else { format!("{full}.{part}") };
            inner.levels.push(Level { namespace: full.clone(), ..Level::default() });
        }
        inner
    }

    fn using(&self, node: Node<'_>, scope: &mut Scope) {
        let Some(level) = scope.levels.last_mut() else {
            return;
        };
        // `using static X;` brings members, not types, into scope.
        let mut cursor = node.walk();
        if node.children(&mut cursor).any(|c| c.kind() == "static") {
            return;
        }
        let alias = node.child_by_field_name("name");
        let mut cursor = node.walk();
        let target = node.named_children(&mut cursor).filter(|c| Some(c.id()) != alias.map(|a| a.id())).last();
        match (alias, target) {
            (Some(alias), Some(target)) => level.aliases.push((self.text(alias), self.type_syntax(target))),
            (None, Some(target)) => {
                if let TypeSyntax::Name(name) = self.type_syntax(target) {
                    level.usings.push(name);
                }
            }
            _ => {}
        }
    }

    fn type_decl(&self, node: Node<'_>) -> Option<TypeDecl> {
        let kind = match node.kind() {
            "class_declaration" | "record_declaration" => TypeKind::Class,
            "struct_declaration" => TypeKind::Struct,
            "interface_declaration" => TypeKind::Interface,
            "enum_declaration" => TypeKind::Enum,
            "delegate_declaration" => TypeKind::Delegate,
            _ => return None,
        };
        let name = self.text(node.child_by_field_name("name")?);
        let (obsolete, attribute_usage, flags) = self.attributes(node);
        let mut decl = TypeDecl {
            name,
            kind,
            modifiers: self.modifiers(node),
            type_params: self.type_params(node),
            bases: Vec::new(),
            constraints: self.constraints(node),
            obsolete,
            attribute_usage,
            flags,
            members: Vec::new(),
            nested: Vec::new(),
            returns: None,
            params: Vec::new(),
            enum_members: Vec::new(),
            line: node.start_position().row + 1,
            parse_errors: 0,
        };
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "base_list" {
                let mut inner = child.walk();
                for base in child.named_children(&mut inner) {
                    if base.kind() != "argument_list" {
                        decl.bases.push(self.type_syntax(base));
                    }
                }
            }
            if child.kind() == "ERROR" {
                decl.parse_errors += 1;
            }
        }
        if kind == TypeKind::Delegate {
            decl.returns = node.child_by_field_name("type").map(|t| self.type_syntax(t));
            decl.params = node.child_by_field_name("parameters").map(|p| self.params(p)).unwrap_or_default();
            return Some(decl);
        }
        let Some(body) = node.child_by_field_name("body") else {
            return Some(decl);
        };
        let mut cursor = body.walk();
        let mut members: Vec<Node<'_>> = body.named_children(&mut cursor).collect();
        // Members tree-sitter's error recovery wrapped are read from inside.
        while let Some(at) = members.iter().position(|m| m.is_error()) {
            let error = members.remove(at);
            decl.parse_errors += 1;
            let mut inner = error.walk();
            let recovered: Vec<Node<'_>> = error.named_children(&mut inner).collect();
            members.splice(at..at, recovered);
        }
        for member in members {
            match member.kind() {
                "enum_member_declaration" => {
                    let name = member.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
                    let value = member.child_by_field_name("value").map(|v| self.text(v));
                    decl.enum_members.push((name, value));
                }
                kind if is_type_declaration(kind) => {
                    if let Some(nested) = self.type_decl(member) {
                        decl.nested.push(nested);
                    }
                }
                _ => {
                    // An error in a body loses nothing; one in a signature may.
                    let body = member.child_by_field_name("body").map(|b| b.id());
                    let mut inner = member.walk();
                    if member.children(&mut inner).any(|c| Some(c.id()) != body && c.has_error()) {
                        decl.parse_errors += 1;
                    }
                    decl.members.extend(self.members(member));
                }
            }
        }
        Some(decl)
    }

    fn members(&self, node: Node<'_>) -> Vec<MemberDecl> {
        let (obsolete, _, _) = self.attributes(node);
        let base = MemberDecl {
            kind: MemberKind::Method,
            name: String::new(),
            modifiers: self.modifiers(node),
            explicit_interface: self.explicit_interface(node),
            type_params: self.type_params(node),
            constraints: self.constraints(node),
            ty: None,
            params: Vec::new(),
            accessors: Vec::new(),
            obsolete,
            value: None,
            line: node.start_position().row + 1,
        };
        let field = |name: &str| node.child_by_field_name(name);
        let ty = field("type").or_else(|| field("returns")).map(|t| self.type_syntax(t));
        let params = field("parameters").map(|p| self.params(p)).unwrap_or_default();
        let name = field("name").map(|n| self.text(n)).unwrap_or_default();
        match node.kind() {
            "method_declaration" => vec![MemberDecl { kind: MemberKind::Method, name, ty, params, ..base }],
            "constructor_declaration" => vec![MemberDecl { kind: MemberKind::Constructor, name, params, ..base }],
            "operator_declaration" => {
                let op = field("operator").map(|o| self.text(o)).unwrap_or_default();
                vec![MemberDecl { kind: MemberKind::Operator, name: op, ty, params, ..base }]
            }
            "conversion_operator_declaration" => {
                let mut cursor = node.walk();
                let which = node
                    .children(&mut cursor)
                    .find(|c| c.kind() == "implicit" || c.kind() == "explicit")
                    .map(|c| c.kind().to_owned())
                    .unwrap_or_else(|| "explicit".into());
                vec![MemberDecl { kind: MemberKind::Conversion, name: which, ty, params, ..base }]
            }
            "property_declaration" => {
                let accessors = self.accessors(node);
                vec![MemberDecl { kind: MemberKind::Property, name, ty, accessors, ..base }]
            }
            "indexer_declaration" => {
                let accessors = self.accessors(node);
                vec![MemberDecl { kind: MemberKind::Indexer, name: "this".into(), ty, params, accessors, ..base }]
            }
            "event_declaration" => {
                vec![MemberDecl { kind: MemberKind::Event, name, ty, ..base }]
            }
            "field_declaration" | "event_field_declaration" => {
                let mut cursor = node.walk();
                let Some(declaration) = node.named_children(&mut cursor).find(|c| c.kind() == "variable_declaration")
                else {
                    return Vec::new();
                };
                let ty = declaration.child_by_field_name("type").map(|t| self.type_syntax(t));
                let constant = base.modifiers.iter().any(|m| m == "const");
                let kind = if node.kind() == "event_field_declaration" {
                    MemberKind::Event
                } else if constant {
                    MemberKind::Constant
                } else {
                    MemberKind::Field
                };
                let mut cursor = declaration.walk();
                declaration
                    .named_children(&mut cursor)
                    .filter(|d| d.kind() == "variable_declarator")
                    .map(|d| {
                        let name = d.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
                        let value = if constant {
                            let mut inner = d.walk();
                            d.named_children(&mut inner)
                                .filter(|c| c.kind() != "identifier")
                                .last()
                                .map(|v| self.text(v))
                        } else {
                            None
                        };
                        MemberDecl { kind, name, ty: ty.clone(), value, ..base.clone() }
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn accessors(&self, node: Node<'_>) -> Vec<(String, Vec<String>)> {
        if let Some(list) = node.child_by_field_name("accessors") {
            let mut cursor = list.walk();
            return list
                .named_children(&mut cursor)
                .filter(|a| a.kind() == "accessor_declaration")
                .map(|a| (a.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default(), self.modifiers(a)))
                .collect();
        }
        // `T P => expr;` is a getter.
        vec![("get".into(), Vec::new())]
    }

    fn modifiers(&self, node: Node<'_>) -> Vec<String> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor).filter(|c| c.kind() == "modifier").map(|c| self.text(c)).collect()
    }

    fn explicit_interface(&self, node: Node<'_>) -> Option<TypeSyntax> {
        let mut cursor = node.walk();
        let specifier = node.named_children(&mut cursor).find(|c| c.kind() == "explicit_interface_specifier")?;
        let mut inner = specifier.walk();
        let name = specifier.named_children(&mut inner).next()?;
        Some(self.type_syntax(name))
    }

    fn type_params(&self, node: Node<'_>) -> Vec<String> {
        let mut cursor = node.walk();
        let Some(list) = node.named_children(&mut cursor).find(|c| c.kind() == "type_parameter_list") else {
            return Vec::new();
        };
        let mut cursor = list.walk();
        list.named_children(&mut cursor)
            .filter(|p| p.kind() == "type_parameter")
            .map(|p| {
                let name = p.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
                let mut inner = p.walk();
                let variance = p.children(&mut inner).find(|c| c.kind() == "in" || c.kind() == "out");
                match variance {
                    Some(v) => format!("{} {name}", v.kind()),
                    None => name,
                }
            })
            .collect()
    }

    fn constraints(&self, node: Node<'_>) -> Vec<Constraint> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| c.kind() == "type_parameter_constraints_clause")
            .map(|clause| {
                let mut inner = clause.walk();
                let mut param = String::new();
                let mut clauses = Vec::new();
                for child in clause.named_children(&mut inner) {
                    match child.kind() {
                        "identifier" if param.is_empty() => param = self.text(child),
                        "type_parameter_constraint" => clauses.push(match child.child_by_field_name("type") {
                            Some(ty) => ConstraintClause::Type(self.type_syntax(ty)),
                            None => ConstraintClause::Keyword(self.text(child).split_whitespace().collect()),
                        }),
                        _ => {}
                    }
                }
                Constraint { param, clauses }
            })
            .collect()
    }

    fn params(&self, list: Node<'_>) -> Vec<Param> {
        let mut cursor = list.walk();
        let mut params: Vec<Param> = list
            .named_children(&mut cursor)
            .filter(|p| p.kind() == "parameter")
            .map(|p| {
                let mut inner = p.walk();
                let children: Vec<Node<'_>> = p.named_children(&mut inner).collect();
                let ty = p.child_by_field_name("type");
                let name = p.child_by_field_name("name");
                let modifiers = children.iter().filter(|c| c.kind() == "modifier").map(|c| self.text(*c)).collect();
                // The default value is the one expression child besides
                // the type and the name.
                let default = children
                    .iter()
                    .rev()
                    .find(|c| {
                        !matches!(c.kind(), "modifier" | "attribute_list")
                            && Some(c.id()) != ty.map(|t| t.id())
                            && Some(c.id()) != name.map(|n| n.id())
                    })
                    .map(|c| self.text(*c));
                Param {
                    modifiers,
                    ty: ty.map(|t| self.type_syntax(t)).unwrap_or(TypeSyntax::Unsupported("__arglist".into())),
                    name: name.map(|n| self.text(n)).unwrap_or_default(),
                    default,
                }
            })
            .collect();
        // The grammar gives a `params` array's type and name to the list itself.
        if let (Some(ty), Some(name)) = (list.child_by_field_name("type"), list.child_by_field_name("name")) {
            params.push(Param {
                modifiers: vec!["params".into()],
                ty: self.type_syntax(ty),
                name: self.text(name),
                default: None,
            });
        }
        params
    }

    /// `[Obsolete]`'s level, `[AttributeUsage]`'s arguments, `[Flags]`.
    fn attributes(&self, node: Node<'_>) -> (Option<Obsolete>, Option<String>, bool) {
        let mut obsolete = None;
        let mut usage = None;
        let mut flags = false;
        let mut cursor = node.walk();
        for list in node.named_children(&mut cursor).filter(|c| c.kind() == "attribute_list") {
            let mut inner = list.walk();
            for attribute in list.named_children(&mut inner).filter(|c| c.kind() == "attribute") {
                let name = attribute.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
                let simple = name.rsplit(['.', ':']).next().unwrap_or_default().trim_end_matches("Attribute");
                let mut args = attribute.walk();
                let arguments: Vec<Node<'_>> = attribute
                    .named_children(&mut args)
                    .filter(|c| c.kind() == "attribute_argument_list")
                    .flat_map(|l| {
                        let mut c = l.walk();
                        l.named_children(&mut c).filter(|a| a.kind() == "attribute_argument").collect::<Vec<_>>()
                    })
                    .collect();
                match simple {
                    "Obsolete" => {
                        // [Obsolete(message, true)] or (message, error: true).
                        let error = arguments.iter().skip(1).any(|a| {
                            let text = self.text(*a);
                            let value = text.rsplit(':').next().unwrap_or_default().trim();
                            value == "true"
                        });
                        obsolete = Some(if error { Obsolete::Error } else { Obsolete::Warning });
                    }
                    "AttributeUsage" => {
                        usage = Some(arguments.iter().map(|a| self.text(*a)).collect::<Vec<_>>().join(", "));
                    }
                    "Flags" => flags = true,
                    _ => {}
                }
            }
        }
        (obsolete, usage, flags)
    }

    fn type_syntax(&self, node: Node<'_>) -> TypeSyntax {
        match node.kind() {
            "predefined_type" => TypeSyntax::Predefined(self.text(node)),
            "identifier" | "generic_name" | "qualified_name" | "alias_qualified_name" => {
                TypeSyntax::Name(self.name_syntax(node))
            }
            "array_type" => {
                let element = node.child_by_field_name("type").map(|t| self.type_syntax(t));
                let rank = node.child_by_field_name("rank").map(|r| self.text(r)).unwrap_or_else(|| "[]".into());
                let rank: String = rank.chars().filter(|c| !c.is_whitespace()).collect();
                match element {
                    Some(element) => TypeSyntax::Array(Box::new(element), rank),
                    None => TypeSyntax::Unsupported(self.text(node)),
                }
            }
            "nullable_type" => match node.child_by_field_name("type") {
                Some(inner) => TypeSyntax::Nullable(Box::new(self.type_syntax(inner))),
                None => TypeSyntax::Unsupported(self.text(node)),
            },
            "pointer_type" => match node.child_by_field_name("type") {
                Some(inner) => TypeSyntax::Pointer(Box::new(self.type_syntax(inner))),
                None => TypeSyntax::Unsupported(self.text(node)),
            },
            "ref_type" => {
                let readonly = self.text(node).split_whitespace().nth(1) == Some("readonly");
                match node.child_by_field_name("type") {
                    Some(inner) => TypeSyntax::Ref { readonly, inner: Box::new(self.type_syntax(inner)) },
                    None => TypeSyntax::Unsupported(self.text(node)),
                }
            }
            "scoped_type" => match node.child_by_field_name("type") {
                Some(inner) => self.type_syntax(inner),
                None => TypeSyntax::Unsupported(self.text(node)),
            },
            "tuple_type" => {
                let mut cursor = node.walk();
                let elements = node
                    .named_children(&mut cursor)
                    .filter(|e| e.kind() == "tuple_element")
                    .map(|e| {
                        let ty = e.child_by_field_name("type").map(|t| self.type_syntax(t));
                        (
                            ty.unwrap_or_else(|| TypeSyntax::Unsupported(self.text(e))),
                            e.child_by_field_name("name").map(|n| self.text(n)),
                        )
                    })
                    .collect();
                TypeSyntax::Tuple(elements)
            }
            _ => TypeSyntax::Unsupported(self.text(node)),
        }
    }

    fn name_syntax(&self, node: Node<'_>) -> NameSyntax {
        match node.kind() {
            "identifier" => {
                NameSyntax { alias: None, segments: vec![Segment { name: self.text(node), args: Vec::new() }] }
            }
            "generic_name" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                let name =
                    children.iter().find(|c| c.kind() == "identifier").map(|c| self.text(*c)).unwrap_or_default();
                let args = children
                    .iter()
                    .filter(|c| c.kind() == "type_argument_list")
                    .flat_map(|l| {
                        let mut c = l.walk();
                        l.named_children(&mut c).map(|t| self.type_syntax(t)).collect::<Vec<_>>()
                    })
                    .collect();
                NameSyntax { alias: None, segments: vec![Segment { name, args }] }
            }
            "qualified_name" => {
                let mut qualifier = node
                    .child_by_field_name("qualifier")
                    .map(|q| self.name_syntax(q))
                    .unwrap_or(NameSyntax { alias: None, segments: Vec::new() });
                if let Some(name) = node.child_by_field_name("name") {
                    qualifier.segments.extend(self.name_syntax(name).segments);
                }
                qualifier
            }
            "alias_qualified_name" => {
                let alias = node.child_by_field_name("alias").map(|a| self.text(a));
                let segments =
                    node.child_by_field_name("name").map(|n| self.name_syntax(n).segments).unwrap_or_default();
                NameSyntax { alias, segments }
            }
            _ => NameSyntax { alias: None, segments: vec![Segment { name: self.text(node), args: Vec::new() }] },
        }
    }
}

/// Every identifier a file uses, and the namespaces its `using` directives
/// import: what a package's source may name of Unity's.
pub fn identifiers(source: &str) -> Result<(std::collections::BTreeSet<String>, Vec<String>), String> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_c_sharp::LANGUAGE.into()).map_err(|e| format!("tree-sitter's C# grammar: {e}"))?;
    let tree = parser.parse(source, None).ok_or("tree-sitter returned no tree")?;
    let mut names = std::collections::BTreeSet::new();
    let mut usings = Vec::new();
    let mut cursor = tree.walk();
    let mut visited_children = false;
    loop {
        let node = cursor.node();
        if !visited_children {
            if node.kind() == "identifier" {
                names.insert(node.utf8_text(source.as_bytes()).unwrap_or_default().to_owned());
            }
            if node.kind() == "using_directive" && node.child_by_field_name("name").is_none() {
                let mut inner = node.walk();
                if let Some(target) = node.named_children(&mut inner).last() {
                    usings.push(target.utf8_text(source.as_bytes()).unwrap_or_default().split_whitespace().collect());
                }
            }
            if cursor.goto_first_child() {
                continue;
            }
        }
        if cursor.goto_next_sibling() {
            visited_children = false;
            continue;
        }
        if !cursor.goto_parent() {
            break;
        }
        visited_children = true;
    }
    Ok((names, usings))
}

fn is_type_declaration(kind: &str) -> bool {
    matches!(
        kind,
        "class_declaration"
            | "struct_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "delegate_declaration"
            | "record_declaration"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(source: &str) -> (Scope, TypeDecl) {
        parse(source).unwrap().types.into_iter().next().unwrap()
    }

    #[test]
    fn a_type_its_scope_and_its_members_are_read() {
        let (scope, decl) = one(
            "using System;\nusing Alias = Some.Other<int>;\nnamespace A.B {\n using System.Collections;\n \
             [Obsolete(\"text\", true)] public sealed partial class C<T> : Base, IEnumerable where T : class, new() {\n  \
             public const int K = 3, L = 4;\n  public static event Action Changed;\n  \
             public string Name { get; private set; }\n  public int this[int i] => i;\n  \
             [Obsolete(\"no\")] public T Get<U>(ref U u, params int[] rest) where U : struct { return default; }\n  \
             public static implicit operator int(C<T> c) => 0;\n  public C(int x = -1, string s = \"a\") { }\n  \
             public enum E { X = 1, Y = X | 2 }\n }\n}\n",
        );
        assert_eq!(scope.levels.iter().map(|l| l.namespace.as_str()).collect::<Vec<_>>(), ["", "A", "A.B"]);
        assert_eq!(scope.levels[0].usings.len(), 1);
        assert_eq!(scope.levels[0].aliases[0].0, "Alias");
        assert_eq!(scope.levels[2].usings[0].segments.len(), 2);
        assert_eq!(decl.name, "C");
        assert_eq!(decl.obsolete, Some(Obsolete::Error));
        assert_eq!(decl.type_params, ["T"]);
        assert_eq!(decl.bases.len(), 2);
        assert_eq!(decl.constraints[0].clauses.len(), 2);
        let names: Vec<(MemberKind, &str)> = decl.members.iter().map(|m| (m.kind, m.name.as_str())).collect();
        assert_eq!(
            names,
            [
                (MemberKind::Constant, "K"),
                (MemberKind::Constant, "L"),
                (MemberKind::Event, "Changed"),
                (MemberKind::Property, "Name"),
                (MemberKind::Indexer, "this"),
                (MemberKind::Method, "Get"),
                (MemberKind::Conversion, "implicit"),
                (MemberKind::Constructor, "C"),
            ]
        );
        assert_eq!(decl.members[0].value.as_deref(), Some("3"));
        assert_eq!(
            decl.members[3].accessors,
            [("get".to_owned(), vec![]), ("set".to_owned(), vec!["private".to_owned()])]
        );
        let get = &decl.members[5];
        assert_eq!(get.obsolete, Some(Obsolete::Warning));
        assert_eq!(get.params[0].modifiers, ["ref"]);
        assert_eq!(get.params[1].modifiers, ["params"]);
        assert!(matches!(get.params[1].ty, TypeSyntax::Array(_, ref rank) if rank == "[]"));
        let ctor = &decl.members[7];
        assert_eq!(ctor.params[0].default.as_deref(), Some("-1"));
        assert_eq!(ctor.params[1].default.as_deref(), Some("\"a\""));
        assert_eq!(decl.nested[0].enum_members[1], ("Y".to_owned(), Some("X | 2".to_owned())));
        assert_eq!(decl.parse_errors, 0);
    }

    #[test]
    fn a_file_scoped_namespace_holds_what_follows_it() {
        let (scope, decl) = one("namespace N.M;\nusing System;\npublic delegate void D(int a);\n");
        assert_eq!(scope.levels.last().unwrap().namespace, "N.M");
        assert_eq!(decl.kind, TypeKind::Delegate);
        assert_eq!(decl.params.len(), 1);
    }
}

//! `execute-dynamic-code`. The fake cannot run C#, and says so: it checks the
//! code's syntax (unterminated literals, unbalanced brackets) with the C#
//! compiler's error codes, applies the security level's API restrictions, and
//! then executes a small, explicit subset — `Debug.Log*`, `var` locals,
//! `return`, string/number/bool literals, `+`, `parameters["key"]`, and a few
//! Editor properties. Anything else fails with a message naming the statement.

use serde_json::{Map, Value, json};

use super::{Outcome, ToolCall, invalid_param, result};
use crate::editor::{
    ConsoleEntry, Editor,
    state::{LogEntry, LogType, SecurityLevel},
};

/// APIs refused at the Restricted level (file system, processes, network,
/// reflection, native code).
const RESTRICTED_APIS: &[&str] = &[
    "System.IO",
    "System.Diagnostics.Process",
    "System.Net",
    "System.Reflection",
    "System.Runtime.InteropServices",
    "File",
    "Directory",
    "FileInfo",
    "DirectoryInfo",
    "Process",
    "WebClient",
    "HttpClient",
    "Socket",
    "Assembly",
    "AppDomain",
    "Activator",
    "Marshal",
    "DllImport",
    "Environment.Exit",
    "EditorApplication.Exit",
    "Registry",
];

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Num(f64),
    Punct(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: usize,
    column: usize,
}

#[derive(Debug)]
struct CompileError {
    message: String,
    line: usize,
    column: usize,
    code: &'static str,
}

/// A position in the source, counting lines and columns from 1.
struct Cursor {
    chars: Vec<char>,
    i: usize,
    line: usize,
    column: usize,
}

impl Cursor {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn error(&self, line: usize, column: usize, code: &'static str, message: &str) -> CompileError {
        CompileError { message: message.to_owned(), line, column, code }
    }
}

/// Splits code into tokens; comments dropped.
fn tokenize(code: &str) -> Result<Vec<Token>, CompileError> {
    let mut cur = Cursor { chars: code.chars().collect(), i: 0, line: 1, column: 1 };
    let mut tokens = Vec::new();
    while let Some(c) = cur.peek(0) {
        let (line, column) = (cur.line, cur.column);
        let push = |tokens: &mut Vec<Token>, tok| tokens.push(Token { tok, line, column });
        if c.is_whitespace() {
            cur.bump();
        } else if c == '/' && cur.peek(1) == Some('/') {
            while cur.peek(0).is_some_and(|c| c != '\n') {
                cur.bump();
            }
        } else if c == '/' && cur.peek(1) == Some('*') {
            cur.bump();
            cur.bump();
            loop {
                match (cur.peek(0), cur.peek(1)) {
                    (None, _) => return Err(cur.error(line, column, "CS1035", "End-of-file found, '*/' expected")),
                    (Some('*'), Some('/')) => {
                        cur.bump();
                        cur.bump();
                        break;
                    }
                    _ => {
                        cur.bump();
                    }
                }
            }
        } else if c == '"' || (matches!(c, '@' | '$') && cur.peek(1) == Some('"')) {
            let verbatim = c == '@';
            if c != '"' {
                cur.bump();
            }
            cur.bump();
            let mut text = String::new();
            loop {
                let ch = match cur.peek(0) {
                    Some('\n') if !verbatim => None,
                    other => other,
                };
                let Some(ch) = ch else {
                    return Err(cur.error(line, column, "CS1010", "Newline in constant"));
                };
                cur.bump();
                match ch {
                    '"' if verbatim && cur.peek(0) == Some('"') => {
                        cur.bump();
                        text.push('"');
                    }
                    '"' => break,
                    '\\' if !verbatim => {
                        let Some(esc) = cur.bump() else { continue };
                        text.push(match esc {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            '0' => '\0',
                            other => other,
                        });
                    }
                    other => text.push(other),
                }
            }
            push(&mut tokens, Tok::Str(text));
        } else if c.is_ascii_digit() {
            let mut text = String::new();
            while let Some(d) = cur.peek(0).filter(|d| d.is_ascii_alphanumeric() || *d == '.') {
                text.push(d);
                cur.bump();
            }
            let digits = text.trim_end_matches(['f', 'F', 'd', 'D', 'm', 'M', 'L', 'l', 'u', 'U']);
            let n = digits
                .parse::<f64>()
                .map_err(|_| cur.error(line, column, "CS1013", &format!("Invalid number '{text}'")))?;
            push(&mut tokens, Tok::Num(n));
        } else if c.is_alphabetic() || c == '_' {
            let mut text = String::new();
            while let Some(d) = cur.peek(0).filter(|d| d.is_alphanumeric() || *d == '_') {
                text.push(d);
                cur.bump();
            }
            push(&mut tokens, Tok::Ident(text));
        } else {
            cur.bump();
            push(&mut tokens, Tok::Punct(c));
        }
    }
    Ok(tokens)
}

/// Bracket balance, as the compiler reports it.
fn check_brackets(tokens: &[Token]) -> Vec<CompileError> {
    let mut stack: Vec<&Token> = Vec::new();
    let mut errors = Vec::new();
    for t in tokens {
        let Tok::Punct(c) = t.tok else { continue };
        match c {
            '(' | '{' | '[' => stack.push(t),
            ')' | '}' | ']' => {
                let open = match c {
                    ')' => '(',
                    '}' => '{',
                    _ => '[',
                };
                match stack.last() {
                    Some(top) if top.tok == Tok::Punct(open) => {
                        stack.pop();
                    }
                    _ => errors.push(CompileError {
                        message: format!("Unexpected '{c}'"),
                        line: t.line,
                        column: t.column,
                        code: if c == '}' { "CS1022" } else { "CS1513" },
                    }),
                }
            }
            _ => {}
        }
    }
    for open in stack {
        let (close, code) = match open.tok {
            Tok::Punct('(') => (')', "CS1026"),
            Tok::Punct('[') => (']', "CS1003"),
            _ => ('}', "CS1513"),
        };
        errors.push(CompileError { message: format!("{close} expected"), line: open.line, column: open.column, code });
    }
    errors
}

/// The first API the Restricted level refuses, if any.
/// The first qualified name that uses a restricted API, as written, and the API.
fn restricted_use(tokens: &[Token]) -> Option<(String, &'static str)> {
    let mut i = 0;
    while i < tokens.len() {
        if let Tok::Ident(first) = &tokens[i].tok {
            let mut name = first.clone();
            let mut j = i + 1;
            while let (Some(Tok::Punct('.')), Some(Tok::Ident(next))) =
                (tokens.get(j).map(|t| &t.tok), tokens.get(j + 1).map(|t| &t.tok))
            {
                name.push('.');
                name.push_str(next);
                j += 2;
            }
            if let Some(api) = restricted_in(&name) {
                return Some((name, api));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    None
}

/// The restricted API a qualified name uses.
fn restricted_in(name: &str) -> Option<&'static str> {
    let parts: Vec<&str> = name.split('.').collect();
    RESTRICTED_APIS.iter().copied().find(|api| {
        let api_parts: Vec<&str> = api.split('.').collect();
        parts.windows(api_parts.len()).any(|w| w == api_parts.as_slice())
    })
}

/// What a restricted API reaches, in the package's words.
fn area(api: &str) -> &'static str {
    match api {
        "System.IO" | "File" | "Directory" | "FileInfo" | "DirectoryInfo" => "the file system",
        "System.Diagnostics.Process" | "Process" => "processes",
        "System.Net" | "WebClient" | "HttpClient" | "Socket" => "the network",
        "System.Reflection" | "Assembly" | "AppDomain" | "Activator" => "reflection",
        "System.Runtime.InteropServices" | "Marshal" | "DllImport" => "native code",
        "Environment.Exit" | "EditorApplication.Exit" => "quitting the Editor",
        _ => "not on Restricted's allow-list",
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Val {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
}

impl Val {
    /// C#'s `ToString()`.
    fn to_cs_string(&self) -> String {
        match self {
            Val::Null => String::new(),
            Val::Bool(true) => "True".into(),
            Val::Bool(false) => "False".into(),
            Val::Num(n) => format!("{n}"),
            Val::Str(s) => s.clone(),
        }
    }

    fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Num(n.as_f64().unwrap_or(0.0)),
            Value::String(s) => Val::Str(s.clone()),
            other => Val::Str(other.to_string()),
        }
    }
}

struct Interpreter<'a> {
    editor: &'a Editor,
    parameters: &'a Map<String, Value>,
    locals: Vec<(String, Val)>,
    logs: Vec<String>,
}

type Unsupported = String;

impl Interpreter<'_> {
    fn expr(&self, toks: &[Token]) -> Result<Val, Unsupported> {
        // Split on top-level '+'.
        let mut depth = 0i32;
        let mut parts: Vec<&[Token]> = Vec::new();
        let mut start = 0;
        for (i, t) in toks.iter().enumerate() {
            match t.tok {
                Tok::Punct('(' | '[') => depth += 1,
                Tok::Punct(')' | ']') => depth -= 1,
                Tok::Punct('+') if depth == 0 => {
                    parts.push(&toks[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&toks[start..]);
        let mut acc: Option<Val> = None;
        for part in parts {
            let v = self.term(part)?;
            acc = Some(match acc {
                None => v,
                Some(Val::Num(a)) if matches!(v, Val::Num(_)) => {
                    let Val::Num(b) = v else { unreachable!("matched above") };
                    Val::Num(a + b)
                }
                Some(a) => Val::Str(a.to_cs_string() + &v.to_cs_string()),
            });
        }
        acc.ok_or_else(|| "an empty expression".to_owned())
    }

    fn term(&self, toks: &[Token]) -> Result<Val, Unsupported> {
        let kinds: Vec<&Tok> = toks.iter().map(|t| &t.tok).collect();
        let ident = |i: usize, s: &str| matches!(kinds.get(i), Some(Tok::Ident(x)) if x == s);
        match kinds.as_slice() {
            [Tok::Str(s)] => Ok(Val::Str(s.clone())),
            [Tok::Num(n)] => Ok(Val::Num(*n)),
            [Tok::Punct('-'), Tok::Num(n)] => Ok(Val::Num(-n)),
            [Tok::Ident(b)] if b == "true" || b == "false" => Ok(Val::Bool(b == "true")),
            [Tok::Ident(n)] if n == "null" => Ok(Val::Null),
            [Tok::Ident(name)] => self
                .locals
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| format!("the name '{name}'")),
            [Tok::Ident(p), Tok::Punct('['), Tok::Str(key), Tok::Punct(']')] if p == "parameters" => {
                Ok(self.parameters.get(key).map_or(Val::Null, Val::from_json))
            }
            [Tok::Punct('('), .., Tok::Punct(')')] => self.expr(&toks[1..toks.len() - 1]),
            [Tok::Ident(_), Tok::Punct('.'), Tok::Ident(prop)] if ident(0, "Application") => {
                let info = &self.editor.base.editor;
                match prop.as_str() {
                    "unityVersion" => Ok(Val::Str(info.unity_version.clone())),
                    "productName" => Ok(Val::Str(info.product_name.clone())),
                    "dataPath" => Ok(Val::Str(editor_link::discovery::unity_path(&self.editor.project.join("Assets")))),
                    "isPlaying" => Ok(Val::Bool(self.editor.sim().playing)),
                    other => Err(format!("Application.{other}")),
                }
            }
            [Tok::Ident(_), Tok::Punct('.'), Tok::Ident(prop)] if ident(0, "EditorApplication") => {
                match prop.as_str() {
                    "isPlaying" => Ok(Val::Bool(self.editor.sim().playing)),
                    "isPaused" => Ok(Val::Bool(self.editor.sim().paused)),
                    other => Err(format!("EditorApplication.{other}")),
                }
            }
            _ => Err(render(toks)),
        }
    }

    /// Runs one statement; `Some` when it returned.
    fn statement(&mut self, toks: &[Token]) -> Result<Option<Val>, Unsupported> {
        let kinds: Vec<&Tok> = toks.iter().map(|t| &t.tok).collect();
        match kinds.as_slice() {
            [] => Ok(None),
            [Tok::Ident(u), ..] if u == "using" => Ok(None),
            [Tok::Ident(r), ..] if r == "return" => self.expr(&toks[1..]).map(Some),
            [Tok::Ident(v), Tok::Ident(name), Tok::Punct('='), ..]
                if v == "var" || v == "string" || v == "int" || v == "bool" || v == "float" =>
            {
                let value = self.expr(&toks[3..])?;
                self.locals.push((name.clone(), value));
                Ok(None)
            }
            _ => {
                // Debug.Log*(expr), optionally qualified with UnityEngine.
                let skip = if matches!(kinds.first(), Some(Tok::Ident(u)) if u == "UnityEngine") { 2 } else { 0 };
                let rest = &kinds[skip.min(kinds.len())..];
                if let [Tok::Ident(d), Tok::Punct('.'), Tok::Ident(method), Tok::Punct('('), .., Tok::Punct(')')] = rest
                {
                    if d == "Debug" {
                        let log_type = match method.as_str() {
                            "Log" => LogType::Log,
                            "LogWarning" => LogType::Warning,
                            "LogError" => LogType::Error,
                            _ => return Err(render(toks)),
                        };
                        let value = self.expr(&toks[skip + 4..toks.len() - 1])?.to_cs_string();
                        self.logs.push(value.clone());
                        self.editor.log([ConsoleEntry {
                            entry: LogEntry {
                                log_type,
                                message: value,
                                stack_trace: format!("UnityEngine.Debug:{method} (object)"),
                            },
                            from_compile: false,
                        }]);
                        return Ok(None);
                    }
                }
                Err(render(toks))
            }
        }
    }
}

fn render(toks: &[Token]) -> String {
    let mut s = String::new();
    for t in toks {
        match &t.tok {
            Tok::Ident(i) => {
                if s.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    s.push(' ');
                }
                s.push_str(i);
            }
            Tok::Str(v) => s.push_str(&format!("{v:?}")),
            Tok::Num(n) => s.push_str(&n.to_string()),
            Tok::Punct(c) => s.push(*c),
        }
    }
    s
}

/// The end of the package's refusal (RestrictedCode.Refusal), word for word.
const RESTRICTED_TAIL: &str = "which is not allowed at security level Restricted (it may read and change the open scenes, \
     their GameObjects and components, and the data of assets; not the file system, the network, processes, native code, \
     threads, settings, packages or scripts)";

/// How many steps (loop iterations and calls) the model says a stopped
/// snippet took in a second: about what the package's guard counts under
/// mono (docs/dynamic-code.md).
const STEPS_PER_SECOND: f64 = 10_000_000.0;

/// `execute-dynamic-code`: a snippet that loops without end (`while (true)`,
/// `for (;;)`, `goto` back to its own label) holds the model's main thread
/// until the call's deadline, where it is stopped as the package's guard
/// stops it, and worded the same; any other snippet is checked and run at
/// once.
pub fn execute(call: ToolCall) -> super::BoxFuture {
    Box::pin(async move {
        let code = call.args.str("Code");
        let endless = tokenize(code).is_ok_and(|tokens| loops_without_end(&tokens));
        if !endless || call.args.bool("CompileOnly") {
            return execute_dynamic_code(&call);
        }
        let seconds = call.args.get("TimeoutSeconds").as_f64().unwrap_or(60.0);
        // The guard stops it a little before the call's deadline, so its
        // own words, not the dispatcher's, answer (DynamicCodeTool.cs).
        let margin = (seconds / 20.0).min(0.1);
        tokio::time::sleep(editor_link::duration::saturating_seconds(seconds - margin)).await;
        let ran = seconds - margin;
        Outcome::Fail(editor_link::jsonrpc::ErrorObject::new(
            editor_link::jsonrpc::ErrorKind::Timeout,
            format!(
                "the snippet was stopped at its deadline, after {ran:.1} s and {} steps; the Editor goes on",
                thousands((ran * STEPS_PER_SECOND) as u64)
            ),
        ))
    })
}

/// `while (true)`, `for (;;)` or `L: goto L;`.
fn loops_without_end(tokens: &[Token]) -> bool {
    let t: Vec<&Tok> = tokens.iter().map(|t| &t.tok).collect();
    let ident = |i: usize, name: &str| matches!(t.get(i), Some(Tok::Ident(n)) if n == name);
    let punct = |i: usize, c: char| matches!(t.get(i), Some(Tok::Punct(p)) if *p == c);
    (0..t.len()).any(|i| {
        (ident(i, "while") && punct(i + 1, '(') && ident(i + 2, "true") && punct(i + 3, ')'))
            || (ident(i, "for") && punct(i + 1, '(') && punct(i + 2, ';') && punct(i + 3, ';') && punct(i + 4, ')'))
            || matches!((t.get(i), t.get(i + 2), t.get(i + 3)), (Some(Tok::Ident(label)), Some(Tok::Ident(g)), Some(Tok::Ident(target)))
                if g == "goto" && label == target && punct(i + 1, ':'))
    })
}

/// `12,345,678`, as .NET's "N0" writes it.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn execute_dynamic_code(call: &ToolCall) -> Outcome {
    let code = call.args.str("Code");
    let parameters = call.args.object("Parameters");
    let compile_only = call.args.bool("CompileOnly");
    let editor = &call.editor;
    let level = editor.sim().settings.dynamic_code_security_level;
    if code.trim().is_empty() {
        return invalid_param("Code", "Parameter 'Code' must not be empty".into());
    }
    let reply = |success: bool, result_text: String, logs: Vec<String>, errors: Vec<Value>, error: String| {
        Outcome::Reply(result([
            ("Success", success.into()),
            ("Result", result_text.into()),
            ("Logs", logs.into()),
            ("CompilationErrors", errors.into()),
            ("ErrorMessage", error.into()),
            ("SecurityLevel", level.as_str().into()),
            ("UpdatedCode", code.into()),
        ]))
    };
    let error_json =
        |e: &CompileError| json!({"Message": e.message, "Line": e.line, "Column": e.column, "ErrorCode": e.code});
    let tokens = match tokenize(code) {
        Ok(tokens) => tokens,
        Err(e) => return reply(false, String::new(), Vec::new(), vec![error_json(&e)], "Compilation failed".into()),
    };
    let errors = check_brackets(&tokens);
    if !errors.is_empty() {
        let errors = errors.iter().map(error_json).collect();
        return reply(false, String::new(), Vec::new(), errors, "Compilation failed".into());
    }
    if level == SecurityLevel::Restricted {
        if let Some((used, api)) = restricted_use(&tokens) {
            // Worded as the package words what its compiled-reference audit
            // (RestrictedCode.cs) finds; the model finds it in the source.
            return reply(
                false,
                String::new(),
                Vec::new(),
                Vec::new(),
                format!("Security violation: the code uses {used} ({}), {RESTRICTED_TAIL}", area(api)),
            );
        }
    }
    if compile_only {
        return reply(true, String::new(), Vec::new(), Vec::new(), String::new());
    }

    let mut interpreter = Interpreter { editor, parameters: &parameters, locals: Vec::new(), logs: Vec::new() };
    let mut returned = None;
    for statement in tokens.split(|t| t.tok == Tok::Punct(';')) {
        match interpreter.statement(statement) {
            Ok(Some(value)) => {
                returned = Some(value);
                break;
            }
            Ok(None) => {}
            Err(what) => {
                let line = statement.first().map_or(0, |t| t.line);
                let logs = std::mem::take(&mut interpreter.logs);
                return reply(
                    false,
                    String::new(),
                    logs,
                    Vec::new(),
                    format!(
                        "fake-unity executes only a subset of C# (Debug.Log/LogWarning/LogError, var locals, return, literals, +, parameters[\"key\"], Application.* and EditorApplication.* properties); not supported at line {line}: {what}"
                    ),
                );
            }
        }
    }
    let text = match returned {
        Some(Val::Null) => "null".to_owned(),
        Some(v) => v.to_cs_string(),
        None => String::new(),
    };
    reply(true, text, interpreter.logs, Vec::new(), String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_carry_compiler_codes_and_positions() {
        let err = tokenize("var s = \"abc;\nreturn s;").unwrap_err();
        assert_eq!((err.code, err.line, err.column), ("CS1010", 1, 9));
        let toks = tokenize("Debug.Log(\"x\";\nif (a) {").unwrap();
        let codes: Vec<_> = check_brackets(&toks).iter().map(|e| (e.code, e.line)).collect();
        assert_eq!(codes, [("CS1026", 1), ("CS1513", 2)]);
    }

    #[test]
    fn restricted_apis_are_found_through_qualification() {
        let find = |code: &str| restricted_use(&tokenize(code).unwrap()).map(|(_, api)| api.to_owned());
        assert_eq!(find("System.IO.File.Delete(\"x\");").as_deref(), Some("System.IO"));
        assert_eq!(find("File.ReadAllText(p);").as_deref(), Some("File"));
        assert_eq!(
            find("var p = System.Diagnostics.Process.Start(\"sh\");").as_deref(),
            Some("System.Diagnostics.Process")
        );
        assert_eq!(find("Debug.Log(\"File\"); var profile = 1;"), None);
    }
}

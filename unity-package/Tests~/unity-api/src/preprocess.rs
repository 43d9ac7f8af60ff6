//! C#'s preprocessor, as the compiler runs it before parsing: `#if`,
//! `#elif`, `#else` and `#endif` evaluated against a set of defines (`#define`
//! and `#undef` in the file change it), every other directive dropped. Lines
//! are kept (excluded ones blanked), so positions still match the source.
//!
//! Directives are lines whose first non-blank character is `#`, outside a
//! multi-line comment or a verbatim string (C# spec §6.5): the lexer below
//! follows just enough of C# to know where those are.

use std::collections::BTreeSet;

/// A directive the preprocessor could not evaluate.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct PreprocessError {
    pub line: usize,
    pub message: String,
}

/// `source` with its conditional sections evaluated against `defines`.
pub fn preprocess(source: &str, defines: &BTreeSet<String>) -> Result<String, PreprocessError> {
    let mut defines = defines.clone();
    let mut out = String::with_capacity(source.len());
    // One frame per open #if: whether this section is taken, whether one of
    // its branches was, and whether the enclosing section is.
    let mut frames: Vec<Frame> = Vec::new();
    let mut lexer = Lexer::Code;
    for (index, line) in source.split_inclusive('\n').enumerate() {
        let active = frames.last().is_none_or(|f| f.taking);
        let trimmed = line.trim_start();
        if lexer == Lexer::Code && trimmed.starts_with('#') {
            let error = |message: String| PreprocessError { line: index + 1, message };
            let directive = strip_comment(trimmed[1..].trim_start());
            let (name, rest) = split_word(directive);
            match name {
                "if" => {
                    let value = if active { evaluate(rest, &defines).map_err(error)? } else { false };
                    frames.push(Frame { taking: active && value, taken: value, enclosing: active });
                }
                "elif" => {
                    let frame = frames.last_mut().ok_or_else(|| error("#elif without #if".into()))?;
                    let value = frame.enclosing && !frame.taken && evaluate(rest, &defines).map_err(error)?;
                    frame.taking = value;
                    frame.taken |= value;
                }
                "else" => {
                    let frame = frames.last_mut().ok_or_else(|| error("#else without #if".into()))?;
                    frame.taking = frame.enclosing && !frame.taken;
                    frame.taken = true;
                }
                "endif" => {
                    frames.pop().ok_or_else(|| error("#endif without #if".into()))?;
                }
                "define" if active => {
                    defines.insert(rest.trim().to_owned());
                }
                "undef" if active => {
                    defines.remove(rest.trim());
                }
                _ => {}
            }
            out.push_str(line_end(line));
            continue;
        }
        if active {
            lexer = lexer.after(line);
            out.push_str(line);
        } else {
            out.push_str(line_end(line));
        }
    }
    if !frames.is_empty() {
        return Err(PreprocessError { line: source.lines().count(), message: "#if without #endif".into() });
    }
    Ok(out)
}

#[derive(Debug)]
struct Frame {
    taking: bool,
    taken: bool,
    enclosing: bool,
}

/// The line's ending alone (a blanked line keeps its place).
fn line_end(line: &str) -> &str {
    if line.ends_with("\r\n") {
        "\r\n"
    } else if line.ends_with('\n') {
        "\n"
    } else {
        ""
    }
}

fn strip_comment(directive: &str) -> &str {
    directive.find("//").map_or(directive, |at| &directive[..at]).trim_end()
}

fn split_word(text: &str) -> (&str, &str) {
    let end = text.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(text.len());
    (&text[..end], &text[end..])
}

/// Where a line leaves the lexer: inside a multi-line comment or a verbatim
/// string, or in code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lexer {
    Code,
    BlockComment,
    VerbatimString,
    RawString(usize),
}

impl Lexer {
    fn after(self, line: &str) -> Lexer {
        let bytes = line.as_bytes();
        let mut state = self;
        let mut i = 0;
        while i < bytes.len() {
            match state {
                Lexer::BlockComment => {
                    if bytes[i..].starts_with(b"*/") {
                        state = Lexer::Code;
                        i += 2;
                        continue;
                    }
                }
                Lexer::VerbatimString => {
                    if bytes[i] == b'"' {
                        if bytes.get(i + 1) == Some(&b'"') {
                            i += 2;
                            continue;
                        }
                        state = Lexer::Code;
                    }
                }
                Lexer::RawString(quotes) => {
                    let run = bytes[i..].iter().take_while(|b| **b == b'"').count();
                    if run >= quotes {
                        state = Lexer::Code;
                        i += run;
                        continue;
                    }
                    i += run.max(1);
                    continue;
                }
                Lexer::Code => match bytes[i] {
                    b'/' if bytes.get(i + 1) == Some(&b'/') => return Lexer::Code,
                    b'/' if bytes.get(i + 1) == Some(&b'*') => {
                        state = Lexer::BlockComment;
                        i += 2;
                        continue;
                    }
                    b'"' => {
                        let run = bytes[i..].iter().take_while(|b| **b == b'"').count();
                        if run >= 3 {
                            state = Lexer::RawString(run);
                            i += run;
                            continue;
                        }
                        let verbatim = i > 0 && bytes[i - 1] == b'@' || i > 1 && bytes[i - 2] == b'@';
                        if verbatim {
                            state = Lexer::VerbatimString;
                        } else {
                            i = skip_quoted(bytes, i, b'"');
                            continue;
                        }
                    }
                    b'\'' => {
                        i = skip_quoted(bytes, i, b'\'');
                        continue;
                    }
                    _ => {}
                },
            }
            i += 1;
        }
        state
    }
}

/// Past a regular string or character literal that starts at `start`.
fn skip_quoted(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    i
}

/// A `#if` condition: identifiers, `true`, `false`, `!`, `==`, `!=`, `&&`,
/// `||` and parentheses (C# spec §6.5.3).
fn evaluate(expression: &str, defines: &BTreeSet<String>) -> Result<bool, String> {
    let tokens = tokenize(expression)?;
    let mut parser = Condition { tokens: &tokens, at: 0, defines };
    let value = parser.or()?;
    if parser.at != tokens.len() {
        return Err(format!("unexpected {:?} in #if {expression}", tokens[parser.at]));
    }
    Ok(value)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    Not,
    And,
    Or,
    Equal,
    NotEqual,
    Open,
    Close,
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let (token, width) = match (c, next) {
            (c, _) if c.is_whitespace() => {
                i += 1;
                continue;
            }
            ('&', Some('&')) => (Token::And, 2),
            ('|', Some('|')) => (Token::Or, 2),
            ('=', Some('=')) => (Token::Equal, 2),
            ('!', Some('=')) => (Token::NotEqual, 2),
            ('!', _) => (Token::Not, 1),
            ('(', _) => (Token::Open, 1),
            (')', _) => (Token::Close, 1),
            (c, _) if c.is_alphanumeric() || c == '_' => {
                let end =
                    chars[i..].iter().position(|c| !c.is_alphanumeric() && *c != '_').map_or(chars.len(), |n| i + n);
                let name: String = chars[i..end].iter().collect();
                (Token::Name(name), end - i)
            }
            (c, _) => return Err(format!("unexpected {c:?} in #if {text}")),
        };
        tokens.push(token);
        i += width;
    }
    Ok(tokens)
}

struct Condition<'a> {
    tokens: &'a [Token],
    at: usize,
    defines: &'a BTreeSet<String>,
}

impl Condition<'_> {
    fn eat(&mut self, token: &Token) -> bool {
        if self.tokens.get(self.at) == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<bool, String> {
        let mut value = self.and()?;
        while self.eat(&Token::Or) {
            value |= self.and()?;
        }
        Ok(value)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut value = self.equality()?;
        while self.eat(&Token::And) {
            value &= self.equality()?;
        }
        Ok(value)
    }

    fn equality(&mut self) -> Result<bool, String> {
        let mut value = self.unary()?;
        loop {
            if self.eat(&Token::Equal) {
                value = value == self.unary()?;
            } else if self.eat(&Token::NotEqual) {
                value = value != self.unary()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn unary(&mut self) -> Result<bool, String> {
        if self.eat(&Token::Not) {
            return Ok(!self.unary()?);
        }
        if self.eat(&Token::Open) {
            let value = self.or()?;
            if !self.eat(&Token::Close) {
                return Err("a ( without its )".into());
            }
            return Ok(value);
        }
        match self.tokens.get(self.at) {
            Some(Token::Name(name)) => {
                self.at += 1;
                Ok(match name.as_str() {
                    "true" => true,
                    "false" => false,
                    name => self.defines.contains(name),
                })
            }
            other => Err(format!("expected a symbol, found {other:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defines(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn sections_are_chosen_by_the_defines_and_lines_keep_their_places() {
        let source = "a\n#if UNITY_EDITOR && !UNITY_2022_1_OR_NEWER\nb\n#elif UNITY_EDITOR\nc\n#else\nd\n#endif\ne\n";
        assert_eq!(preprocess(source, &defines(&["UNITY_EDITOR"])).unwrap(), "a\n\nb\n\n\n\n\n\ne\n");
        assert_eq!(
            preprocess(source, &defines(&["UNITY_EDITOR", "UNITY_2022_1_OR_NEWER"])).unwrap(),
            "a\n\n\n\nc\n\n\n\ne\n"
        );
        assert_eq!(preprocess(source, &defines(&[])).unwrap(), "a\n\n\n\n\n\nd\n\ne\n");
    }

    #[test]
    fn nested_sections_in_a_skipped_one_stay_skipped() {
        let source = "#if A\n#if B\nx\n#else\ny\n#endif\n#endif\nz";
        assert_eq!(preprocess(source, &defines(&["B"])).unwrap(), "\n\n\n\n\n\n\nz");
        assert_eq!(preprocess(source, &defines(&["A"])).unwrap(), "\n\n\n\ny\n\n\nz");
    }

    #[test]
    fn define_and_undef_change_what_follows() {
        let source = "#define X\n#if X\na\n#endif\n#undef X\n#if X\nb\n#endif\n";
        assert_eq!(preprocess(source, &defines(&[])).unwrap(), "\n\na\n\n\n\n\n\n");
    }

    #[test]
    fn equality_and_parentheses_follow_the_spec() {
        let d = defines(&["A"]);
        assert!(evaluate("(A || B) && !(B == true)", &d).unwrap());
        assert!(evaluate("A != B", &d).unwrap());
        assert!(!evaluate("A == B", &d).unwrap());
        assert!(evaluate("A &&", &d).is_err());
    }

    #[test]
    fn a_hash_inside_a_comment_or_verbatim_string_is_not_a_directive() {
        let source = "/* start\n#if NEVER\n*/ var s = @\"\n#if NEVER\n\";\nx\n";
        assert_eq!(preprocess(source, &defines(&[])).unwrap(), source);
    }

    #[test]
    fn an_unbalanced_file_is_an_error() {
        assert!(preprocess("#if A\nx\n", &defines(&[])).is_err());
        assert!(preprocess("#endif\n", &defines(&[])).is_err());
    }
}

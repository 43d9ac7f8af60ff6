//! Debugging aid: tree-sitter's parse of a C# file after the preprocessor,
//! with each ERROR node's line and text.
use std::io::Write;

fn main() {
    let mut out = std::io::stdout().lock();
    let path = std::env::args().nth(1).expect("a .cs file");
    let src = std::fs::read_to_string(path).expect("readable");
    let defines = ["UNITY_EDITOR".to_owned()].into_iter().collect();
    let src = unity_api::preprocess::preprocess(&src, &defines).expect("preprocessed");
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_c_sharp::LANGUAGE.into()).expect("grammar");
    let t = p.parse(&src, None).expect("tree");
    let mut stack = vec![t.root_node()];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            let text = n.utf8_text(src.as_bytes()).unwrap_or_default();
            let _ = writeln!(
                out,
                "{}:{} {} {:?}",
                n.start_position().row + 1,
                n.start_position().column,
                n.kind(),
                &text[..text.len().min(120)]
            );
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
}

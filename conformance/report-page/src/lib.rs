//! One self-contained HTML page for a report: `page.html` (its styles and
//! script inline, nothing fetched) with the report's JSON inside a
//! `<script type="application/json">` element, which the page's script
//! reads and draws. The suite's `run --html` and `unity-versions --html`
//! write their reports through it, so both read the same way.
//!
//! The page draws two kinds of data (its `kind`): `suite` (the suite's JSON
//! report, the case groups, the baseline) and `versions` (the package
//! against each Unity version's API).

use serde_json::Value;

const TEMPLATE: &str = include_str!("page.html");
const TITLE: &str = "__TITLE__";
const DATA: &str = "__REPORT_DATA__";

/// The page for `data` (an object with `kind` and `title`), titled `title`.
pub fn render(title: &str, data: &Value) -> String {
    // Each token once, left to right: a title or report that happens to
    // contain a token's text is never substituted again.
    let mut out = String::with_capacity(TEMPLATE.len() + 4096);
    let mut rest = TEMPLATE;
    while let Some((at, token)) = next_token(rest) {
        out.push_str(&rest[..at]);
        match token {
            TITLE => out.push_str(&html_escape(title)),
            _ => out.push_str(&script_json(data)),
        }
        rest = &rest[at + token.len()..];
    }
    out.push_str(rest);
    out
}

fn next_token(text: &str) -> Option<(usize, &'static str)> {
    [TITLE, DATA].into_iter().filter_map(|t| text.find(t).map(|at| (at, t))).min_by_key(|(at, _)| *at)
}

/// Text as HTML text or attribute value.
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that can sit inside a `<script>` element: `<`, `>` and `&` as
/// `\u` escapes (so no `</script>` or `<!--` can end or change the
/// element), and the two line separators JavaScript once refused in
/// strings. Still JSON, the same value.
pub fn script_json(data: &Value) -> String {
    let text = serde_json::to_string(data).unwrap_or_else(|_| "null".to_owned());
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The JSON inside a rendered page (what the page's script reads), for
/// tests and tools that check a page.
pub fn data_of(page: &str) -> Option<Value> {
    const OPEN: &str = r#"<script id="report-data" type="application/json">"#;
    let start = page.find(OPEN)? + OPEN.len();
    let end = start + page[start..].find("</script>")?;
    serde_json::from_str(&page[start..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_data_comes_back_whole_whatever_it_holds() {
        let hostile = "</script><script>alert(1)</script><!-- \u{2028}\u{2029} & __TITLE__ __REPORT_DATA__";
        let data = json!({"kind": "suite", "title": hostile, "report": {"cases": [{"detail": hostile}]}});
        let page = render(hostile, &data);
        assert_eq!(data_of(&page), Some(data));
        // One script element of data, closed where the template closes it.
        assert_eq!(page.matches("</script>").count(), TEMPLATE.matches("</script>").count());
        assert!(!page.contains("<script>alert"), "the title or data escaped into markup");
    }

    #[test]
    fn the_page_fetches_nothing() {
        // Self-contained: no stylesheet, script, font or image from anywhere.
        for needle in ["http://", "https://", "src=\"//", "href=\"//", "@import", "url("] {
            assert!(!TEMPLATE.contains(needle), "page.html refers to {needle}");
        }
        assert!(TEMPLATE.contains(r#"<script id="report-data" type="application/json">__REPORT_DATA__</script>"#));
    }
}

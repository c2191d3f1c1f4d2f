//! Text in markup: what HTML and SVG both need escaped, in one place for the two
//! renderers ([`super::html`], [`super::svg`]).

/// Escapes `s` for HTML and SVG text and attribute values.
///
/// ```
/// use lecture_kit::render::html::escape;
/// assert_eq!(escape(r#"批 > 952 & "放不下"'"#), "批 &gt; 952 &amp; &quot;放不下&quot;&#39;");
/// ```
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
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

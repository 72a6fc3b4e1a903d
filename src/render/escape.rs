//! Text made safe for HTML: the one escaping function, which the dashboard
//! and its charts apply through `render::markup`.

use std::borrow::Cow;

/// Text made safe for HTML content and attribute values. Control
/// characters but tab and line breaks, and bidi controls, become U+FFFD:
/// the page may be read as text too (`cat`, `less`), and a bidi override
/// would reorder what the browser shows.
pub(crate) fn escape(s: &str) -> Cow<'_, str> {
    let s = super::inert_lines(s);
    if !s.contains(['&', '<', '>', '"', '\'']) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
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
    Cow::Owned(out)
}

//! Lone UTF-16 surrogate escapes (`"\ud800"` with no low half after it) in
//! JSON text: every reader replaces them, in place, with `\ufffd` (U+FFFD,
//! the replacement character) before parsing, and warns once per input.
//!
//! JSON allows such escapes, Python's json module reads and writes them,
//! but they are no Unicode text: Rust strings cannot hold them, so a reader
//! would refuse the whole line (or document) over one character. The
//! replacement has the escape's length, so a buffer is repaired where it
//! stands.

/// What was repaired in some text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Repaired {
    /// Lines that held one or more lone surrogates.
    pub lines: u64,
    /// The 1-based number of the first of them.
    pub first_line: u64,
}

impl Repaired {
    /// The warning for input `path`, when anything was repaired: given
    /// once per input, at the first line, as the input is read.
    pub(crate) fn warning(&self, path: &str) -> Option<String> {
        (self.lines > 0).then(|| {
            format!(
                "{path}:{}: lone UTF-16 surrogate escape (such as \"\\ud800\") replaced with \
                 U+FFFD, the replacement character; later ones in this input are replaced \
                 without a warning",
                self.first_line
            )
        })
    }
}

/// Warns through `diag` of what was repaired in a chunk of input `path`,
/// unless `warned` says this input was warned of already.
pub(crate) fn warn_once(
    r: Repaired,
    path: &str,
    warned: &mut bool,
    diag: &mut crate::plumbing::diag::Diag,
) {
    if *warned {
        return;
    }
    if let Some(msg) = r.warning(path) {
        *warned = true;
        diag.warn("lone-surrogate", format_args!("{msg}"));
    }
}

/// Replaces every lone surrogate escape in the JSON text `data` with
/// `\ufffd`; `first_line` is the number of `data`'s first line. Text that
/// is not JSON may be changed where it looks like such an escape, which
/// leaves it as unreadable as it was.
pub(crate) fn repair(data: &mut [u8], first_line: u64) -> Repaired {
    let mut repaired = Repaired::default();
    // Lines counted up to `counted`, which is on line `line`.
    let (mut counted, mut line) = (0, first_line);
    // Where the last repaired line ends, so that a line counts once.
    let mut line_done_until = 0;
    let finder = memchr::memmem::Finder::new(b"\\u");
    let mut at = 0;
    while let Some(found) = finder.find(&data[at..]) {
        let p = at + found;
        at = p + 2;
        if escaped_backslash(data, p) {
            continue;
        }
        let Some(unit) = hex4(data, p + 2) else {
            continue;
        };
        at = p + 6;
        if !(0xD800..0xE000).contains(&unit) {
            continue;
        }
        if unit < 0xDC00
            && data.get(p + 6..p + 8) == Some(b"\\u")
            && hex4(data, p + 8).is_some_and(|low| (0xDC00..0xE000).contains(&low))
        {
            at = p + 12;
            continue;
        }
        data[p + 2..p + 6].copy_from_slice(b"fffd");
        if p >= line_done_until {
            line += memchr::memchr_iter(b'\n', &data[counted..p]).count() as u64;
            counted = p;
            line_done_until = memchr::memchr(b'\n', &data[p..]).map_or(data.len(), |n| p + n);
            if repaired.lines == 0 {
                repaired.first_line = line;
            }
            repaired.lines += 1;
        }
    }
    repaired
}

/// True when the backslash at `p` is itself escaped: an odd number of
/// backslashes stands right before it.
fn escaped_backslash(data: &[u8], p: usize) -> bool {
    let before = data[..p].iter().rev().take_while(|b| **b == b'\\').count();
    !before.is_multiple_of(2)
}

/// The four hex digits at `at`, as a number.
fn hex4(data: &[u8], at: usize) -> Option<u32> {
    let digits = data.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0u32, |n, b| Some(n * 16 + char::from(*b).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repaired(text: &str) -> (String, Repaired) {
        let mut data = text.as_bytes().to_vec();
        let r = repair(&mut data, 1);
        (String::from_utf8(data).unwrap(), r)
    }

    #[test]
    fn lone_halves_become_the_replacement_character() {
        let (text, r) = repaired(r#"{"a":"\ud800","b":"x\uDFFFy"}"#);
        assert_eq!(text, r#"{"a":"\ufffd","b":"x\ufffdy"}"#);
        assert_eq!(
            r,
            Repaired {
                lines: 1,
                first_line: 1
            }
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["a"], "\u{FFFD}");
    }

    #[test]
    fn pairs_other_escapes_and_escaped_backslashes_are_left_alone() {
        for text in [
            r#"{"a":"\ud83d\ude00"}"#,
            r#"{"a":"\\ud800"}"#,
            r#"{"a":"\u00e9\n\u0041"}"#,
            r#"{"a":"\\\\ud800"}"#,
            r#"{"a":"\ud83d"#,
        ] {
            let (out, r) = repaired(text);
            if text.ends_with("d83d") {
                // Cut off before a low half could follow: lone.
                assert_eq!(r.lines, 1);
                continue;
            }
            assert_eq!(out, text);
            assert_eq!(r.lines, 0, "{text}");
        }
        let (out, r) = repaired(r#"{"a":"\\\ud800","b":"\ud800\ud800\udc00"}"#);
        assert_eq!(out, r#"{"a":"\\\ufffd","b":"\ufffd\ud800\udc00"}"#);
        assert_eq!(r.lines, 1);
    }

    #[test]
    fn lines_are_counted_once_and_numbered_from_the_first() {
        let text = "{}\n{\"a\":\"\\ud800\\udbff\"}\n\n{\"a\":\"\\udc00\"}\n";
        let mut data = text.as_bytes().to_vec();
        let r = repair(&mut data, 10);
        assert_eq!(
            r,
            Repaired {
                lines: 2,
                first_line: 11
            }
        );
        let w = r.warning("t.ndjson").unwrap();
        assert!(w.starts_with("t.ndjson:11: lone UTF-16 surrogate"), "{w}");
    }
}

//! JSON strings written by hand, byte for byte as serde_json writes them:
//! for records whose fields are written without serde's per-field
//! machinery.

/// Appends `s` as a JSON string, quoted and escaped as serde_json does:
/// `"` and `\` escaped, `\b \f \n \r \t` short, the other control
/// characters as `\u00xx`, everything else as it is.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(at) = next_escape(bytes, start) {
        out.extend_from_slice(&bytes[start..at]);
        write_escape(out, bytes[at]);
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The index of the first byte at or after `from` that must be escaped.
// Eight bytes at a time: texts are long (tool input and output) and almost
// never need an escape, and a byte-at-a-time table cost about five
// instructions a byte.
#[inline]
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES * 0x80;
    let mut i = from;
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("eight bytes"));
        // A lane below 0x20, or equal to '"' or '\\' (a zero after xor).
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        if (control | quote | backslash) & HIGH != 0 {
            break;
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| needs_escape(b))
        .map(|p| i + p)
}

#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

fn write_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(s: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_as_serde_json_does() {
        for s in [
            "",
            "plain text that is longer than eight bytes",
            "a\"b\\c",
            "tab\there, line\nthere\r, \u{8}\u{c}",
            "\u{0}\u{1f}\u{7f} é 漢字 🙂",
            "seven\"8",
            "12345678\"",
        ] {
            assert_eq!(written(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    proptest::proptest! {
        /// Any text, escapes anywhere in it: the bytes serde_json writes.
        #[test]
        fn any_text_reads_as_serde_json_writes_it(s in "(\\PC|[\\x00-\\x1f\"\\\\]){0,80}") {
            proptest::prop_assert_eq!(written(&s), serde_json::to_string(&s).unwrap());
        }
    }
}

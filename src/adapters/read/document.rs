//! Whole-document inputs: read up to `--max-document`, integers too wide for
//! 64 bits quoted, parsed with what could not be read named.

use std::io::Read;

use crate::adapters::sink::Sink;

/// Reads a whole-document input (BOM dropped), naming the input in the
/// error. Integers too wide for 64 bits come back quoted (see
/// [`quote_wide_integers`]).
/// Lone surrogate escapes are replaced (see [`crate::plumbing::surrogates`]). A
/// document past the `--max-document` limit is refused: it is read whole,
/// and what it decodes to takes many times its size.
pub(crate) fn read_document(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<Vec<u8>> {
    let limit = sink.settings.document_limit;
    let mut data =
        crate::plumbing::framing::read_all(r.take(limit.saturating_add(1))).map_err(|e| {
            anyhow::anyhow!("{}: {}", sink.path(), crate::plumbing::diag::io_reason(&e))
        })?;
    if data.len() as u64 > limit {
        return Err(too_large(sink.path(), limit));
    }
    sink.repaired(crate::plumbing::surrogates::repair(&mut data, 1));
    Ok(quote_wide_integers(data))
}

/// The error for a document larger than `limit` bytes.
pub fn too_large(path: &str, limit: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "{path}: larger than {}, the --max-document limit of the formats read as one \
         document; raise --max-document, or split the file",
        crate::plumbing::diag::size_text(limit)
    )
}

/// Writes integers past 64 bits (128-bit trace ids, as the Python SDK
/// serializes them) as JSON strings of the same digits, so no parser turns
/// them into floats and loses their low digits.
pub(crate) fn quote_wide_integers(data: Vec<u8>) -> Vec<u8> {
    wide_integers_quoted(&data).unwrap_or(data)
}

/// `data` with its integers past 64 bits quoted, or `None` when it has
/// none (the common case, which then costs no copy).
pub(crate) fn wide_integers_quoted(data: &[u8]) -> Option<Vec<u8>> {
    if !has_digit_run(data, 20) {
        return None;
    }
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if b == b'"' {
            i = past_string(data, i + 1);
            continue;
        }
        if !b.is_ascii_digit() || (i > 0 && is_number_byte(data[i - 1])) {
            i += 1;
            continue;
        }
        let end = i + data[i..].iter().take_while(|c| is_number_byte(**c)).count();
        let digits = &data[i..end];
        let past_u64 = digits.len() > 20
            || (digits.len() == 20 && digits > b"18446744073709551615".as_slice());
        if past_u64 && digits.iter().all(u8::is_ascii_digit) {
            let o = out.get_or_insert_with(|| Vec::with_capacity(data.len() + 16));
            o.extend_from_slice(&data[copied..i]);
            o.push(b'"');
            o.extend_from_slice(&data[i..end]);
            o.push(b'"');
            copied = end;
        }
        i = end;
    }
    out.map(|mut o| {
        o.extend_from_slice(&data[copied..]);
        o
    })
}

/// Whether `data` holds `n` ASCII digits in a row (an integer past 64 bits
/// has at least 20). A run of `n` starting anywhere in the next `n` bytes
/// covers the last of them, so the search probes one byte in `n` where
/// there are few digits.
pub(crate) fn has_digit_run(data: &[u8], n: usize) -> bool {
    // Invariant: no run of `n` starts before `from`, and the byte before
    // `from` is not a digit.
    let mut from = 0;
    while from + n <= data.len() {
        let probe = from + n - 1;
        if !data[probe].is_ascii_digit() {
            from = probe + 1;
            continue;
        }
        let start = from
            + data[from..probe]
                .iter()
                .rposition(|b| !b.is_ascii_digit())
                .map_or(0, |k| k + 1);
        let end = probe
            + 1
            + data[probe + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        if end - start >= n {
            return true;
        }
        from = end + 1;
    }
    false
}

/// The position just past the string whose text starts at `from` (or the
/// end of `data` when it is not closed). Strings are most of a document's
/// bytes, so they are crossed by `memchr`, not byte by byte.
fn past_string(data: &[u8], mut from: usize) -> usize {
    while let Some(k) = memchr::memchr2(b'"', b'\\', &data[from..]) {
        let at = from + k;
        if data[at] == b'"' {
            return at + 1;
        }
        from = at + 2;
        if from >= data.len() {
            break;
        }
    }
    data.len()
}

pub(crate) fn is_number_byte(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')
}

/// What is lost of a document read in part: the line where it went wrong
/// (when known) and why.
pub type DocumentLoss = (Option<u64>, String);

/// Parses a whole JSON document. On failure: the line where it went wrong
/// (when known) and why, in serde_json's words (simd-json's are terse).
/// A list cut short (a download or copy that stopped early) keeps its
/// complete items: the document comes back with them, and the loss too.
pub(crate) fn parse_document(
    data: &mut Vec<u8>,
) -> Result<(simd_json::BorrowedValue<'_>, Option<DocumentLoss>), DocumentLoss> {
    if let Some(bad) = not_utf8(data) {
        return Err(bad);
    }
    let mut loss = None;
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(data) {
        let line = Some(e.line() as u64).filter(|l| *l > 0);
        let reason = document_reason(&e);
        // Only a document that ends too soon can have been cut short.
        let salvage = e.is_eof().then(|| complete_items(data)).flatten();
        match salvage.filter(|&(_, n)| n > 0) {
            Some((end, n)) => {
                data.truncate(end);
                data.push(b']');
                let items = if n == 1 { "item" } else { "items" };
                loss = Some((
                    line,
                    format!(
                        "{reason}: the file is cut short; the {n} complete {items} before the cut are read"
                    ),
                ));
            }
            None => return Err((line, reason)),
        }
    }
    let doc = simd_json::to_borrowed_value(data).map_err(|_| {
        (
            None,
            "not valid JSON: nested too deeply or too large".to_string(),
        )
    })?;
    Ok((doc, loss))
}

/// Where a whole-document input stops being UTF-8, and why all of it is
/// lost: one JSON document cannot be read around a bad byte.
pub(crate) fn not_utf8(data: &[u8]) -> Option<DocumentLoss> {
    let e = std::str::from_utf8(data).err()?;
    let line = 1 + memchr::memchr_iter(b'\n', &data[..e.valid_up_to()]).count() as u64;
    Some((
        Some(line),
        "not valid UTF-8, so the whole file is skipped (convert it first, e.g. `iconv -f latin1 -t utf-8`)".to_string(),
    ))
}

/// For a document that is a list: the end of its last complete item and
/// how many items came before that end, or `None` when it is no list.
pub(crate) fn complete_items(data: &[u8]) -> Option<(usize, usize)> {
    let skip_ws = |mut at: usize| {
        while data.get(at).is_some_and(|b| b" \t\r\n".contains(b)) {
            at += 1;
        }
        at
    };
    let mut at = skip_ws(0);
    if data.get(at) != Some(&b'[') {
        return None;
    }
    at += 1;
    let (mut end, mut n) = (at, 0);
    loop {
        let mut items =
            serde_json::Deserializer::from_slice(&data[at..]).into_iter::<serde::de::IgnoredAny>();
        let Some(Ok(_)) = items.next() else {
            return Some((end, n));
        };
        (at, n) = (at + items.byte_offset(), n + 1);
        end = at;
        at = skip_ws(at);
        if data.get(at) != Some(&b',') {
            return Some((end, n));
        }
        at += 1;
    }
}

/// Why a whole-document input is not JSON, in serde_json's words.
pub(crate) fn document_reason(e: &serde_json::Error) -> String {
    match crate::plumbing::diag::json_reason(e) {
        // A second value after the first: most likely NDJSON read with a
        // format that takes one document per file.
        m if m == "trailing characters" => format!(
            "not valid JSON: {m} after the first value; this format reads one JSON \
             document per file (NDJSON? leave the format to auto-detection)"
        ),
        m => format!("not valid JSON: {m}"),
    }
}

#[cfg(test)]
mod tests;

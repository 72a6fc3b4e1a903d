//! Inspect AI's default log format, `.eval`: a zip of `header.json` (the
//! eval, plan, results and status), one `samples/ID_epoch_N.json` per
//! sample, and summaries. Read in memory, never unpacked to disk: the
//! header and the samples make the JSON log the `inspect-ai` reader reads.
//! Entries may be stored, deflated or (as Inspect writes them since 0.3.x)
//! zstd-compressed.

use std::io::{self, Read};

use serde_json::{Map, Value};

use crate::adapters::sink::Sink;
use crate::plumbing::diag::io_reason;

/// The first bytes of a zip file (a local file header).
pub(crate) const ZIP_MAGIC: [u8; 4] = *b"PK\x03\x04";

/// The zip's compression method numbers read here.
const STORED: u16 = 0;
const DEFLATED: u16 = 8;
const ZSTD: u16 = 93;

/// Reads one `.eval` log from `r` (the whole zip, at most the document
/// limit) into `sink` through the `inspect-ai` reader.
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let bytes = crate::adapters::read::document::read_document(r, sink)?;
    let log = match assemble(&bytes) {
        Ok(log) => log,
        Err(why) => return sink.skip(None, why),
    };
    let text = serde_json::to_vec(&log)?;
    super::read(io::Cursor::new(text), sink)
}

/// The JSON log an `.eval` zip holds: the header's members (or, for a log
/// whose eval has not finished, those of `_journal/start.json`) and
/// `samples` in the order of their ids and epochs.
fn assemble(bytes: &[u8]) -> Result<Value, String> {
    let mut zip = zip::ZipArchive::new(io::Cursor::new(bytes))
        .map_err(|e| format!("a zip file that does not read: {e}"))?;
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .collect();
    let mut log = match entry(&mut zip, "header.json") {
        Some(header) => header?,
        None => match entry(&mut zip, "_journal/start.json") {
            // A log still being written (or of a crashed eval): its start.
            Some(start) => {
                let mut start = start?;
                if let Value::Object(o) = &mut start {
                    o.entry("status").or_insert_with(|| "started".into());
                }
                start
            }
            None => {
                return Err(format!(
                    "a zip file that is not an Inspect .eval log (no header.json or _journal/start.json; it holds {})",
                    first_names(&names)
                ));
            }
        },
    };
    let mut samples: Vec<(&str, &String)> = names
        .iter()
        .filter_map(|n| {
            let id = n.strip_prefix("samples/")?.strip_suffix(".json")?;
            Some((id, n))
        })
        .collect();
    samples.sort_by(|a, b| crate::record::natural_cmp(a.0, b.0));
    let mut read = Vec::with_capacity(samples.len());
    for (_, name) in samples {
        if let Some(sample) = entry(&mut zip, name) {
            read.push(sample?);
        }
    }
    let Value::Object(members) = &mut log else {
        return Err("header.json: expected a JSON object".to_string());
    };
    // No sample entries is a log without samples, as the JSON log says it.
    if !read.is_empty() {
        members.insert("samples".to_string(), Value::Array(read));
    } else {
        members.remove("samples");
    }
    Ok(Value::Object(std::mem::take(members)))
}

/// One entry parsed as JSON; none when the zip has no such entry.
fn entry(
    zip: &mut zip::ZipArchive<io::Cursor<&[u8]>>,
    name: &str,
) -> Option<Result<Value, String>> {
    let mut file = zip.by_name_raw(name.as_bytes()).ok()?;
    let method = method_number(file.compression());
    let mut raw = Vec::with_capacity(file.compressed_size() as usize);
    if let Err(e) = file.read_to_end(&mut raw) {
        return Some(Err(format!("{name}: {}", io_reason(&e))));
    }
    let text = match method {
        STORED => Ok(raw),
        DEFLATED => inflate(flate2::read::DeflateDecoder::new(&raw[..])),
        ZSTD => ruzstd::decoding::StreamingDecoder::new(&raw[..])
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
            .and_then(inflate),
        other => {
            return Some(Err(format!(
                "{name}: compressed with method {other}, which triage does not read (stored, deflate and zstd it does)"
            )));
        }
    };
    Some(
        text.map_err(|e| format!("{name}: {}", io_reason(&e)))
            .and_then(|t| serde_json::from_slice::<Value>(&t).map_err(|e| format!("{name}: {e}")))
            .map(|v| match v {
                Value::Object(o) => Value::Object(o),
                other => Value::Object(Map::from_iter([("value".to_string(), other)])),
            }),
    )
}

/// The zip method number: the crate, built without zstd, names that
/// method only as an unsupported number.
#[allow(deprecated)]
fn method_number(m: zip::CompressionMethod) -> u16 {
    match m {
        zip::CompressionMethod::Stored => STORED,
        zip::CompressionMethod::Deflated => DEFLATED,
        zip::CompressionMethod::Unsupported(n) => n,
        _ => u16::MAX,
    }
}

fn inflate(mut r: impl Read) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    r.read_to_end(&mut out)?;
    Ok(out)
}

fn first_names(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    match names.len().saturating_sub(shown.len()) {
        0 => shown.join(", "),
        n => format!("{} and {n} more", shown.join(", ")),
    }
}

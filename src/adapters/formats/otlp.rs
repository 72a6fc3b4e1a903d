//! The `otlp` format: OTLP/HTTP JSON trace requests (resourceSpans →
//! scopeSpans → spans), one per file or one per line as the Collector's file
//! exporter writes them. Request lines stream: each trace is emitted in
//! pre-order of its span tree once it is complete (see `trace_window`); a
//! file of one request is read whole.

use std::borrow::Cow;
use std::io::Read;
use std::ops::Range;

use serde::Deserialize;
use serde_json::Value;

use crate::adapters::formats::Format;
use crate::adapters::read::lines::{LineFormat, SpanLine};
use crate::adapters::read::shape::Shape;
use crate::adapters::read::span_events::{Attrs, HeldSpan, SharedAttrs, SpanEvents, SpanParts};
use crate::adapters::read::spans::StatusCode;
use crate::adapters::read::{lines, spans};
use crate::adapters::settings::DecodeSettings;
use crate::adapters::sink::Sink;
use crate::adapters::unreadable::Unreadable;
use crate::plumbing::json_scan::LineScratch;

/// The span model's span. Its attributes and events are read apart from
/// `span` (whose `attributes` and `events` are not read).
fn held_span(
    span: WireSpan<'_>,
    span_attrs: &AttrList<'_>,
    events: SpanEvents,
    resource: &SharedAttrs<'_>,
    line: Option<u64>,
    settings: &DecodeSettings,
) -> HeldSpan {
    let (status, status_message) = span.status.map_or((StatusCode::Unset, None), |s| {
        (status_code_of(s.code.as_ref()), s.message)
    });
    let start = nanos_of(span.start.as_ref());
    let end = nanos_of(span.end.as_ref());
    let parts = SpanParts {
        trace_id: span
            .trace_id
            .as_deref()
            .map(spans::normal_id)
            .unwrap_or_default(),
        span_id: span
            .span_id
            .as_deref()
            .map(spans::normal_id)
            .unwrap_or_default(),
        parent_id: span.parent_span_id.as_deref().map(spans::normal_id),
        name: span.name.map(Cow::into_owned).unwrap_or_default(),
        unended: start.is_some_and(|s| s > 0) && end.is_some_and(|e| e == 0),
        start,
        end,
        status,
        status_message,
        line,
        linked_trace: span
            .links
            .into_iter()
            .flatten()
            .find_map(|l| l.trace_id)
            .map(|t| spans::normal_id(&t)),
        events,
    };
    let a = Attrs::over(span_attrs, resource);
    HeldSpan::new(parts, &a, settings)
}

// ---- reading: one request per line, or one request per file ----

/// Reads OTLP requests from `r` into `sink`, emitting each trace once it
/// is complete (see `json_lines`).
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let settings = sink.settings.clone();
    let format = LineFormat {
        one_line: "one OTLP request",
        decode: |scratch: &mut LineScratch, data: &[u8], range: Range<usize>, number: u64| {
            request_line(data, range, number, &settings, scratch)
        },
        whole: |doc: Vec<u8>, sink: &mut Sink<'_>| {
            let mut held = Vec::new();
            read_document(&doc, sink, &mut held)?;
            Ok(held)
        },
    };
    lines::spans(r, sink, format)
}

/// Reads the request at `range` of a chunk's `data` (made ready to be
/// scanned in place): with the scanner, or with serde when the scanner
/// declines it.
fn request_line(
    data: &[u8],
    range: Range<usize>,
    number: u64,
    settings: &DecodeSettings,
    scratch: &mut LineScratch,
) -> SpanLine {
    let bytes = &data[range.clone()];
    // Exporters batch tens to hundreds of spans a request.
    let mut spans = Vec::with_capacity(64);
    if let Ok(line) = simdutf8::basic::from_utf8(bytes)
        && scan::hold_line(
            line,
            &data[range.start..],
            scratch,
            number,
            settings,
            &mut spans,
        )
        .is_ok()
    {
        return read_spans(spans);
    }
    match decode_request(bytes) {
        Ok(req) => {
            hold(req, Some(number), settings, &mut spans);
            read_spans(spans)
        }
        Err(reason) => SpanLine::Skip(reason),
    }
}

fn read_spans(spans: Vec<HeldSpan>) -> SpanLine {
    SpanLine::Read {
        spans,
        skipped: Vec::new(),
    }
}

/// Reads requests written as JSON documents one after another.
fn read_document(doc: &[u8], sink: &mut Sink<'_>, held: &mut Vec<HeldSpan>) -> anyhow::Result<()> {
    if let Err(e) = std::str::from_utf8(doc) {
        let line = 1 + memchr::memchr_iter(b'\n', &doc[..e.valid_up_to()]).count() as u64;
        return sink.skip(Some(line), Unreadable::NotUtf8);
    }
    if crate::adapters::read::value::first_line_cut_short(doc) {
        // Request lines whose first was cut short: each line on its own.
        for (i, line) in doc.split(|b| *b == b'\n').enumerate() {
            if line.trim_ascii().is_empty() {
                continue;
            }
            match checked(serde_json::from_slice::<ExportRequest>(line)) {
                Ok(req) => hold(req, Some(i as u64 + 1), &sink.settings, held),
                Err(reason) => sink.skip(Some(i as u64 + 1), &reason)?,
            }
        }
        return Ok(());
    }
    let mut stream = serde_json::Deserializer::from_slice(doc).into_iter::<ExportRequest>();
    let line_at = |offset: usize| 1 + memchr::memchr_iter(b'\n', &doc[..offset]).count() as u64;
    loop {
        let start = stream.byte_offset();
        let line = line_at(start + leading_space(&doc[start..]));
        let Some(decoded) = stream.next() else {
            return Ok(());
        };
        let failed = decoded.is_err();
        let line = match &decoded {
            Err(e) if e.line() > 0 => e.line() as u64,
            _ => line,
        };
        match checked(decoded) {
            Ok(req) => hold(req, Some(line), &sink.settings, held),
            Err(reason) => sink.skip(Some(line), &reason)?,
        }
        if failed {
            return Ok(()); // the stream cannot go on past broken JSON
        }
    }
}

fn leading_space(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_whitespace()).count()
}

/// Reads one line as [`read`] reads a line of its input: the number of
/// `resourceSpans` the request holds, or why the line would be skipped.
/// A receiver checks each request with it before acknowledging it.
pub fn check_line(bytes: &[u8]) -> Result<usize, Unreadable> {
    let req = decode_request(bytes)?;
    Ok(req.resource_spans.map_or(0, |r| r.len()))
}

fn decode_request(bytes: &[u8]) -> Result<ExportRequest<'_>, Unreadable> {
    if simdutf8::basic::from_utf8(bytes).is_err() {
        return Err(Unreadable::NotUtf8);
    }
    checked(serde_json::from_slice::<ExportRequest>(bytes))
}

/// A decoded request, or why it is none: not JSON, or JSON of another shape.
fn checked<'a>(
    decoded: serde_json::Result<ExportRequest<'a>>,
) -> Result<ExportRequest<'a>, Unreadable> {
    let req = decoded.map_err(|e| {
        let why = crate::plumbing::diag::json_reason(&e);
        match e.classify() {
            serde_json::error::Category::Data => {
                Unreadable::shape(format!("not an OTLP trace request: {why}"))
            }
            _ => Unreadable::Json(why),
        }
    })?;
    if req.resource_spans.is_none() {
        return Err(Unreadable::shape(
            "not an OTLP trace request: no \"resourceSpans\"",
        ));
    }
    Ok(req)
}

/// Holds the spans of an OTLP request met inside another span file.
pub(crate) fn hold_value(
    value: Value,
    line: Option<u64>,
    settings: &DecodeSettings,
    held: &mut Vec<HeldSpan>,
) -> Result<(), Unreadable> {
    let req = checked(ExportRequest::deserialize(value))?;
    hold(req, line, settings, held);
    Ok(())
}

fn hold(
    req: ExportRequest<'_>,
    line: Option<u64>,
    settings: &DecodeSettings,
    held: &mut Vec<HeldSpan>,
) {
    for rs in req.resource_spans.unwrap_or_default() {
        let resource = attributes(rs.resource.and_then(|r| r.attributes));
        let resource = SharedAttrs::new(&resource);
        for scope in rs.scope_spans.unwrap_or_default() {
            for span in scope.spans.unwrap_or_default() {
                let mut span = span;
                let span_attrs = attributes(span.attributes.take());
                let events = span_events(span.events.take());
                held.push(held_span(
                    span,
                    &span_attrs,
                    events,
                    &resource,
                    line,
                    settings,
                ));
            }
        }
    }
}

mod scan;
mod wire;

pub(crate) use wire::key_values;
use wire::{AttrList, ExportRequest, WireSpan, attributes, nanos_of, span_events, status_code_of};

/// The `otlp` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "otlp",
    help: "OTLP/HTTP JSON trace requests, one per file or one per line; each trace is emitted once complete (root ended, --trace-window passed).",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// An OTLP request: `resourceSpans` (or the snake_case spelling) at the top.
fn claims(shape: &Shape<'_>) -> bool {
    !shape.top_is_list && (shape.has("resourceSpans") || shape.has("resource_spans"))
}

#[cfg(test)]
mod tests;

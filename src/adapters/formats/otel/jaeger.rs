//! Jaeger's trace JSON, turned into span objects of the shape the `otel`
//! reader reads: the query API's `{"data": [trace, …]}` (what the UI's JSON
//! download saves), one trace `{"traceID", "spans", "processes"}`, or a
//! list of traces.

use rustc_hash::FxHashMap;
use serde_json::{Map, Value, json};

use crate::adapters::read::span_events::is_read;

/// Whether `o` is one Jaeger trace: its spans, with its id or processes.
pub(super) fn is_trace(o: &Map<String, Value>) -> bool {
    matches!(o.get("spans"), Some(Value::Array(_)))
        && (o.contains_key("traceID") || matches!(o.get("processes"), Some(Value::Object(_))))
}

/// The traces of a Jaeger answer or trace, each as its span objects; None
/// for any other value.
pub(super) fn traces(object: &mut Map<String, Value>) -> Option<Vec<Vec<Value>>> {
    if is_trace(object) {
        return Some(vec![trace(std::mem::take(object))]);
    }
    let Some(Value::Array(data)) = object.get("data") else {
        return None;
    };
    if data.is_empty() || !data.iter().all(|t| t.as_object().is_some_and(is_trace)) {
        return None;
    }
    let Some(Value::Array(data)) = object.remove("data") else {
        return None;
    };
    Some(
        data.into_iter()
            .map(|t| match t {
                Value::Object(t) => trace(t),
                _ => Vec::new(),
            })
            .collect(),
    )
}

/// One trace's spans: tags are attributes; the process's service name, and
/// those of its tags the span model reads, the resource; the first
/// reference within the trace the parent (as Jaeger's UI nests spans,
/// whatever the reference's type) and a reference to another trace a
/// link; `otel.status_code` (or an `error` tag) the status; a log whose
/// `event` field names it an event, OpenTracing's `error` log the
/// exception; times in microseconds.
fn trace(mut trace: Map<String, Value>) -> Vec<Value> {
    let resources: FxHashMap<String, Map<String, Value>> = match trace.remove("processes") {
        Some(Value::Object(processes)) => processes
            .into_iter()
            .map(|(id, process)| (id, resource(process)))
            .collect(),
        _ => FxHashMap::default(),
    };
    let trace_id = trace
        .get("traceID")
        .and_then(Value::as_str)
        .map(str::to_string);
    let Some(Value::Array(spans)) = trace.remove("spans") else {
        return Vec::new();
    };
    spans
        .into_iter()
        .map(|span| match span {
            Value::Object(o) => span_object(o, trace_id.as_deref(), &resources),
            other => other,
        })
        .collect()
}

fn span_object(
    mut o: Map<String, Value>,
    trace_id: Option<&str>,
    resources: &FxHashMap<String, Map<String, Value>>,
) -> Value {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let trace_id = text(o.get("traceID")).or_else(|| trace_id.map(str::to_string));
    let references = match o.remove("references") {
        Some(Value::Array(r)) => r,
        _ => Vec::new(),
    };
    let in_trace = |r: &Value| r.get("traceID").and_then(Value::as_str) == trace_id.as_deref();
    let parent = references
        .iter()
        .find(|r| in_trace(r))
        .and_then(|r| text(r.get("spanID")));
    let links: Vec<Value> = references
        .iter()
        .filter(|r| !in_trace(r))
        .filter_map(|r| text(r.get("traceID")))
        .map(|t| json!({"trace_id": t}))
        .collect();
    let mut attributes = tags(o.remove("tags"));
    let status = status(&attributes);
    let message = attributes.remove("otel.status_description");
    let resource = text(o.get("processID"))
        .and_then(|id| resources.get(&id).cloned())
        .unwrap_or_default();
    let events: Vec<Value> = match o.remove("logs") {
        Some(Value::Array(logs)) => logs.into_iter().map(event).collect(),
        _ => Vec::new(),
    };
    let start = super::micros(o.get("startTime"));
    let mut span = json!({
        "trace_id": trace_id,
        "span_id": text(o.get("spanID")),
        "parent_id": parent,
        "name": o.remove("operationName").unwrap_or(Value::Null),
        "start_time": start.map(|s| (s * 1000).to_string()),
        "attributes": attributes,
        "status": {"code": status, "message": message},
        "events": events,
        "links": links,
        "resource": {"attributes": resource},
    });
    // Without a duration the span's end is unknown, not missing: a span
    // that never ended would fail its tool call.
    if let Some(end) = start
        .zip(super::micros(o.get("duration")))
        .map(|(s, d)| s + d)
    {
        span["end_time"] = Value::String((end * 1000).to_string());
    }
    span
}

/// A process as the resource: its service name and the tags the span
/// model reads (host and SDK tags are dropped rather than copied into
/// every span).
fn resource(process: Value) -> Map<String, Value> {
    let Value::Object(mut process) = process else {
        return Map::new();
    };
    let mut resource = tags(process.remove("tags"));
    resource.retain(|k, _| is_read(k));
    if let Some(name) = process.remove("serviceName") {
        resource.insert("service.name".into(), name);
    }
    resource
}

/// The status the tags state: `otel.status_code` by name or number, else
/// an `error` tag that is true (a bool, or a text such as Zipkin's message).
fn status(attributes: &Map<String, Value>) -> Value {
    match attributes.get("otel.status_code") {
        Some(Value::String(code)) => return Value::String(code.clone()),
        Some(Value::Number(code)) => return Value::Number(code.clone()),
        _ => {}
    }
    match attributes.get("error") {
        Some(Value::Bool(true)) => "ERROR".into(),
        Some(Value::String(s)) if !matches!(s.as_str(), "" | "false" | "0") => "ERROR".into(),
        _ => Value::Null,
    }
}

/// A log as a span event: its `event` field names it; OpenTracing's
/// `event: error` log, with `error.kind` and `message` (or
/// `error.object`), is the span's exception.
fn event(log: Value) -> Value {
    let mut fields = match log {
        Value::Object(mut log) => tags(log.remove("fields")),
        _ => Map::new(),
    };
    let name = fields.remove("event").unwrap_or(Value::Null);
    if name == "error" {
        let kind = fields.remove("error.kind");
        let message = fields
            .remove("message")
            .or_else(|| fields.remove("error.object"));
        fields.insert("exception.type".into(), kind.unwrap_or(Value::Null));
        fields.insert("exception.message".into(), message.unwrap_or(Value::Null));
        return json!({"name": "exception", "attributes": fields});
    }
    json!({"name": name, "attributes": fields})
}

/// Jaeger's tags or log fields (`[{"key", "type", "value"}]`) as a map.
fn tags(list: Option<Value>) -> Map<String, Value> {
    let Some(Value::Array(list)) = list else {
        return Map::new();
    };
    list.into_iter()
        .filter_map(|t| match t {
            Value::Object(mut t) => {
                let key = t.remove("key")?.as_str()?.to_string();
                Some((key, t.remove("value").unwrap_or(Value::Null)))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::adapters::records_of;
    use serde_json::{Value, json};

    fn events(input: &Value) -> Vec<Value> {
        let text = input.to_string();
        let mut recs = records_of(super::super::FORMAT, "trace.json", text.as_bytes());
        recs.retain(|r| r["kind"] == "event");
        recs
    }

    fn tag(key: &str, value: Value) -> Value {
        json!({"key": key, "type": "string", "value": value})
    }

    fn span(id: &str, tags: Vec<Value>, logs: Value) -> Value {
        json!({"traceID": "t", "spanID": id, "operationName": format!("op{id}"), "references": [],
               "startTime": 1_700_000_000_000_000i64, "duration": 10, "tags": tags, "logs": logs})
    }

    #[test]
    fn errors_as_jaeger_and_opentracing_write_them() {
        let log = json!([{"timestamp": 1, "fields": [tag("event", json!("error")),
            tag("error.kind", json!("Timeout")), tag("message", json!("no answer"))]}]);
        let trace = json!({"traceID": "t", "spans": [
            span("1", vec![tag("error", json!("connection reset"))], json!([])),
            span("2", vec![tag("otel.status_code", json!(2))], json!([])),
            span("3", vec![tag("error", json!(false)), tag("otel.status_code", json!("OK"))], json!([])),
            span("4", vec![], log),
        ]});
        let evs = events(&trace);
        let ok: Vec<&Value> = evs.iter().map(|e| &e["action_succeeded"]).collect();
        assert_eq!(ok, [false, false, true, false]);
        assert_eq!(evs[3]["error"]["type"], "Timeout");
        assert_eq!(evs[3]["error"]["message"], "no answer");
    }

    #[test]
    fn odd_times_and_missing_parts_read_without_loss() {
        let mut huge = span("1", vec![tag("tool.name", json!("search"))], json!([]));
        huge["startTime"] = json!(i64::MAX);
        let mut no_duration = span("2", vec![tag("tool.name", json!("search"))], json!([]));
        no_duration.as_object_mut().unwrap().remove("duration");
        let mut float = span("3", vec![], json!([]));
        float["startTime"] = json!(1.7e15);
        // One trace without processes among others: each reads.
        let answer = json!({"data": [
            {"traceID": "t", "spans": [huge, no_duration, float]},
            {"traceID": "u", "processes": {"p": {"serviceName": "desk", "tags": [tag("host.name", json!("h1"))]}},
             "spans": [{"traceID": "u", "spanID": "9", "operationName": "x", "startTime": 1, "duration": 1, "processID": "p"}]},
        ]});
        let evs = events(&answer);
        assert_eq!(evs.len(), 4);
        let by_id = |id: &str| evs.iter().find(|e| e["span_id"] == id).unwrap();
        // A span without a duration has not failed.
        assert_eq!(by_id("2")["action_succeeded"], true);
        assert!(by_id("3")["timestamp"].is_string(), "{}", by_id("3"));
        assert_eq!(by_id("9")["agent_id"], "desk");
        // A list of traces, as `jq .data` leaves them.
        let listed = events(&answer["data"]);
        assert_eq!(listed.len(), 4);
    }
}

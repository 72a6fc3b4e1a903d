//! Zipkin's span JSON (API v2, what Zipkin's UI downloads and the
//! OpenTelemetry Zipkin exporter sends), turned into span objects of the
//! shape the `otel` reader reads.

use serde_json::{Map, Value, json};

/// Whether `o` is a Zipkin v2 span: its trace id beside an `id` (not a
/// `spanId`), with an endpoint, a timestamp or tags.
pub(super) fn is_span(o: &Map<String, Value>) -> bool {
    o.contains_key("traceId")
        && o.contains_key("id")
        && !o.contains_key("spanId")
        && (o.contains_key("localEndpoint")
            || o.contains_key("timestamp")
            || matches!(o.get("tags"), Some(Value::Object(_))))
}

/// One span: its tags are attributes, the local endpoint's service the
/// resource; `otel.status_code` (or an `error` tag, whose text is the
/// error) the status; an annotation an event (the OpenTelemetry exporter
/// writes an event as `{"name": {attributes}}`); times in microseconds.
/// Zipkin keeps no links.
pub(super) fn span_object(mut o: Map<String, Value>) -> Map<String, Value> {
    let mut tags = match o.remove("tags") {
        Some(Value::Object(tags)) => tags,
        _ => Map::new(),
    };
    // Zipkin marks an error by the tag itself: its text, empty or not, is
    // the message.
    let error = tags.remove("error").filter(|e| match e {
        Value::String(s) => s != "false",
        Value::Bool(b) => *b,
        _ => false,
    });
    let code = match tags.remove("otel.status_code") {
        Some(code) => code,
        None if error.is_some() => "ERROR".into(),
        None => Value::Null,
    };
    let message = tags
        .remove("otel.status_description")
        .or_else(|| error.filter(|e| e.as_str().is_some_and(|s| !s.is_empty())));
    let service = o
        .get("localEndpoint")
        .and_then(|e| e.get("serviceName"))
        .cloned()
        .unwrap_or(Value::Null);
    let events: Vec<Value> = match o.remove("annotations") {
        Some(Value::Array(list)) => list.iter().map(annotation).collect(),
        _ => Vec::new(),
    };
    let start = super::micros(o.get("timestamp"));
    let mut span = json!({
        "trace_id": o.remove("traceId"),
        "span_id": o.remove("id"),
        "parent_id": o.remove("parentId"),
        "name": o.remove("name").unwrap_or(Value::Null),
        "start_time": start.map(|s| (s * 1000).to_string()),
        "attributes": tags,
        "status": {"code": code, "message": message},
        "events": events,
        "resource": {"attributes": {"service.name": service}},
    });
    if let Some(end) = start
        .zip(super::micros(o.get("duration")))
        .map(|(s, d)| s + d)
    {
        span["end_time"] = Value::String((end * 1000).to_string());
    }
    match span {
        Value::Object(span) => span,
        _ => Map::new(),
    }
}

/// An annotation as an event: `{"name": {attributes}}` as the
/// OpenTelemetry exporter writes its value, else the value names it.
fn annotation(a: &Value) -> Value {
    let value = a.get("value").and_then(Value::as_str).unwrap_or_default();
    if let Ok(Value::Object(event)) = serde_json::from_str::<Value>(value)
        && event.len() == 1
        && let Some((name, attributes)) = event.into_iter().next()
    {
        return json!({"name": name, "attributes": attributes});
    }
    json!({"name": value})
}

#[cfg(test)]
mod tests {
    use crate::adapters::records_of;
    use serde_json::{Value, json};

    #[test]
    fn a_zipkin_span_list_reads_with_its_errors_and_services() {
        let spans = json!([
            {"traceId": "t1", "id": "a", "name": "invoke_agent clerk", "timestamp": 1_700_000_000_000_000i64,
             "duration": 900, "localEndpoint": {"serviceName": "desk"},
             "tags": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "clerk"}},
            {"traceId": "t1", "id": "b", "parentId": "a", "name": "execute_tool lookup",
             "timestamp": 1_700_000_000_000_100i64, "duration": 300, "localEndpoint": {"serviceName": "desk"},
             "tags": {"gen_ai.tool.name": "lookup", "otel.status_code": "ERROR", "error": "KeyError: 'A-17'"},
             "annotations": [{"timestamp": 1, "value": "{\"exception\": {\"exception.type\": \"KeyError\", \"exception.message\": \"'A-17'\"}}"}]},
            {"traceId": "t2", "id": "c", "name": "GET /", "timestamp": 1_700_000_000_001_000i64,
             "localEndpoint": {"serviceName": "web"}, "tags": {"error": "timeout"}},
        ]);
        let text = spans.to_string();
        let mut recs = records_of(super::super::FORMAT, "zipkin.json", text.as_bytes());
        recs.retain(|r| r["kind"] == "event");
        let ok: Vec<&Value> = recs.iter().map(|e| &e["action_succeeded"]).collect();
        assert_eq!(ok, [true, false, false]);
        assert_eq!(recs[1]["span_id"], "b");
        assert_eq!(recs[1]["parent_span_id"], "a");
        assert_eq!(recs[1]["agent_id"], "clerk");
        assert_eq!(recs[1]["error"]["message"], "KeyError: 'A-17'");
        assert_eq!(recs[1]["latency_ms"]["total"], 0);
        assert_eq!(recs[2]["agent_id"], "web");
        assert_eq!(recs[2]["error"]["message"], "timeout");
    }
}

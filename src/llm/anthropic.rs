//! The Anthropic Messages API: `POST {base}/v1/messages` with the system
//! prompt as one cached block, and the answer's text blocks and usage.

use serde_json::{Value, json};

use super::{ApiKey, LlmError, Prompt, Provider, Reply, Usage};

pub(crate) const DEFAULT_MODEL: &str = "claude-haiku-4-5";
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

pub(crate) struct Anthropic {
    base_url: String,
}

impl Anthropic {
    /// `base_url` as ANTHROPIC_BASE_URL gives it (without `/v1`).
    pub(crate) fn new(base_url: Option<String>) -> Self {
        Anthropic {
            base_url: super::base_url(base_url, DEFAULT_BASE_URL),
        }
    }
}

impl Provider for Anthropic {
    fn key_var(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }

    fn headers(&self, key: Option<&ApiKey>) -> Vec<(&'static str, String)> {
        let mut h = vec![
            ("content-type", "application/json".to_string()),
            ("anthropic-version", API_VERSION.to_string()),
        ];
        if let Some(k) = key {
            h.push(("x-api-key", k.expose().to_string()));
        }
        h
    }

    /// The system prompt is the same for every request of a run, so it is
    /// marked for the prompt cache: requests after the first read it from
    /// there (when it is longer than the model's minimum cacheable prompt).
    fn body(&self, model: &str, prompt: &Prompt) -> Value {
        json!({
            "model": model,
            "max_tokens": prompt.max_tokens,
            "temperature": 0,
            "system": [{
                "type": "text",
                "text": prompt.system,
                "cache_control": {"type": "ephemeral"},
            }],
            "messages": [{"role": "user", "content": prompt.user}],
        })
    }

    fn reply(&self, body: &Value) -> Result<Reply, LlmError> {
        let blocks = body
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| LlmError::BadReply("no \"content\" in the answer".to_string()))?;
        let text: String = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let u = body.get("usage");
        let n = |field: &str| {
            u.and_then(|u| u.get(field))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Ok(Reply {
            text,
            usage: Usage {
                requests: 1,
                input_tokens: n("input_tokens"),
                output_tokens: n("output_tokens"),
                cache_read_input_tokens: n("cache_read_input_tokens"),
                cache_creation_input_tokens: n("cache_creation_input_tokens"),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_blocks_and_usage() {
        let a = Anthropic::new(Some("http://h:1/".into()));
        assert_eq!(a.url(), "http://h:1/v1/messages");
        let body = json!({"content":[{"type":"text","text":"Hi"},{"type":"tool_use"},{"type":"text","text":" there"}],
            "usage":{"input_tokens":12,"output_tokens":3,"cache_read_input_tokens":10}});
        let r = a.reply(&body).unwrap();
        assert_eq!(r.text, "Hi there");
        assert_eq!(r.usage.input_tokens, 12);
        assert_eq!(r.usage.cache_read_input_tokens, 10);
        assert_eq!(r.usage.cache_creation_input_tokens, 0);
        assert!(a.reply(&json!({"id": 1})).is_err());
    }
}

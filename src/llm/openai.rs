//! OpenAI-compatible chat completions (OpenAI itself and local model
//! servers such as llama.cpp, vLLM or Ollama): `POST {base}/chat/completions`.

use serde_json::{Value, json};

use super::{ApiKey, LlmError, Prompt, Provider, Reply, Usage};

pub(crate) const DEFAULT_MODEL: &str = "gpt-4o-mini";
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

pub(crate) struct OpenAi {
    base_url: String,
}

impl OpenAi {
    /// `base_url` as OPENAI_BASE_URL gives it (with `/v1`).
    pub(crate) fn new(base_url: Option<String>) -> Self {
        OpenAi {
            base_url: super::base_url(base_url, DEFAULT_BASE_URL),
        }
    }
}

impl Provider for OpenAi {
    fn key_var(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// No Authorization header without a key: local servers need none.
    fn headers(&self, key: Option<&ApiKey>) -> Vec<(&'static str, String)> {
        let mut h = vec![("content-type", "application/json".to_string())];
        if let Some(k) = key {
            h.push(("authorization", format!("Bearer {}", k.expose())));
        }
        h
    }

    fn body(&self, model: &str, prompt: &Prompt) -> Value {
        json!({
            "model": model,
            "max_tokens": prompt.max_tokens,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
        })
    }

    fn reply(&self, body: &Value) -> Result<Reply, LlmError> {
        let text = body
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                LlmError::BadReply("no \"choices[0].message.content\" in the answer".to_string())
            })?;
        let n = |path: &str| body.pointer(path).and_then(Value::as_u64).unwrap_or(0);
        Ok(Reply {
            text: text.to_string(),
            usage: Usage {
                requests: 1,
                input_tokens: n("/usage/prompt_tokens"),
                output_tokens: n("/usage/completion_tokens"),
                cache_read_input_tokens: n("/usage/prompt_tokens_details/cached_tokens"),
                cache_creation_input_tokens: 0,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_choice_and_usage() {
        let o = OpenAi::new(None);
        assert_eq!(o.url(), "https://api.openai.com/v1/chat/completions");
        let body = json!({"choices":[{"message":{"role":"assistant","content":"ok"}}],
            "usage":{"prompt_tokens":20,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":16}}});
        let r = o.reply(&body).unwrap();
        assert_eq!(r.text, "ok");
        assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (20, 2));
        assert_eq!(r.usage.cache_read_input_tokens, 16);
        assert!(o.headers(None).iter().all(|(k, _)| *k != "authorization"));
    }
}

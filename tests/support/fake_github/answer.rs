//! An answer before it becomes HTTP, and GitHub's error bodies.
//!
//! GitHub's errors are JSON: `message`, `documentation_url` (the page of the operation that
//! failed), `status` (the status code as a string), and for validation failures `errors[]`
//! with `resource`, `field` and `code` (`missing_field`, `invalid`, `already_exists`, `custom`
//! with a `message`). The upload host words them slightly differently (a `request_id`, no
//! `status`), as recorded in `tests/fixtures/github/octokit-fixtures/release-assets-conflict.json`.

use serde_json::{Value, json};

/// Stands for the failing operation's documentation page until the server knows it.
pub const DOC_PLACEHOLDER: &str = "<documentation_url of the operation>";

/// GitHub's generic documentation page (used when no operation matched).
pub const DOC_ROOT: &str = "https://docs.github.com/rest";

#[derive(Debug, Clone)]
pub struct Ans {
    pub status: u16,
    pub json: Option<Value>,
    /// Raw bytes and their content type (asset downloads, the raw media type of contents).
    pub raw: Option<(Vec<u8>, String)>,
    pub link: Option<String>,
    pub location: Option<String>,
    pub retry_after: Option<u64>,
}

impl Ans {
    pub fn json(status: u16, v: Value) -> Self {
        Ans {
            status,
            json: Some(v),
            raw: None,
            link: None,
            location: None,
            retry_after: None,
        }
    }

    pub fn empty(status: u16) -> Self {
        Ans {
            status,
            json: None,
            raw: None,
            link: None,
            location: None,
            retry_after: None,
        }
    }

    pub fn raw(status: u16, bytes: Vec<u8>, content_type: &str) -> Self {
        Ans {
            raw: Some((bytes, content_type.to_string())),
            ..Ans::empty(status)
        }
    }

    /// `{"message", "documentation_url", "status"}`.
    pub fn msg(status: u16, m: &str) -> Self {
        Self::json(
            status,
            json!({"message": m, "documentation_url": DOC_PLACEHOLDER, "status": status.to_string()}),
        )
    }

    pub fn not_found() -> Self {
        Self::msg(404, "Not Found")
    }

    /// `422 Validation Failed` with one `errors[]` entry.
    pub fn invalid(resource: &str, code: &str, field: &str) -> Self {
        Self::json(
            422,
            json!({"message": "Validation Failed",
                   "errors": [{"resource": resource, "code": code, "field": field}],
                   "documentation_url": DOC_PLACEHOLDER, "status": "422"}),
        )
    }

    /// `422 Validation Failed` with a `custom` error and its message.
    pub fn custom(resource: &str, message: &str) -> Self {
        Self::json(
            422,
            json!({"message": "Validation Failed",
                   "errors": [{"resource": resource, "code": "custom", "message": message}],
                   "documentation_url": DOC_PLACEHOLDER, "status": "422"}),
        )
    }

    /// Whether the request took effect (a 2xx answer).
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as sent, and its content type.
    pub fn body_bytes(&self) -> (Vec<u8>, Option<String>) {
        match (&self.json, &self.raw) {
            (Some(v), _) => (
                v.to_string().into_bytes(),
                Some("application/json; charset=utf-8".into()),
            ),
            (None, Some((b, ct))) => (b.clone(), Some(ct.clone())),
            _ => (Vec::new(), None),
        }
    }

    /// Put the operation's documentation page into an error body; on the upload host, use
    /// its wording (a `request_id`, no `status`).
    pub fn finish_error(&mut self, doc_url: &str, upload_host: bool, request_id: &str) {
        let Some(Value::Object(map)) = self.json.as_mut() else {
            return;
        };
        if map.get("documentation_url").and_then(Value::as_str) == Some(DOC_PLACEHOLDER) {
            let url = if upload_host { DOC_ROOT } else { doc_url };
            map.insert("documentation_url".into(), json!(url));
            if upload_host {
                map.remove("status");
                map.insert("request_id".into(), json!(request_id));
            }
        }
    }
}

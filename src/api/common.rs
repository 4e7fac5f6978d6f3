//! Shapes shared by several resources: pagination, user summaries,
//! permissions, and the service's 422 body.

use serde::{Deserialize, Serialize};

use super::Secret;

/// Default page size of every paginated operation (the spec's samples use 100).
pub const DEFAULT_PAGE_LIMIT: i64 = 100;

/// Pagination fields of every paginated response.
///
/// The cursor is an integer `starting_token`; a response with `paginated: true`
/// and a `next_starting_token` has more pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageInfo {
    /// The cursor this page starts at.
    #[serde(default)]
    pub starting_token: i64,
    /// The page size.
    #[serde(default = "default_limit")]
    pub limit: i64,
    /// Whether the result was paginated (more pages may follow).
    #[serde(default)]
    pub paginated: bool,
    /// The cursor of the next page, if any.
    #[serde(default)]
    pub next_starting_token: Option<i64>,
}

fn default_limit() -> i64 {
    DEFAULT_PAGE_LIMIT
}

impl PageInfo {
    /// The cursor of the next page, when there is one.
    pub fn next(&self) -> Option<i64> {
        if self.paginated {
            self.next_starting_token
        } else {
            None
        }
    }
}

/// A user summary embedded in other records (`created_by_user`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// The user's id.
    pub id: String,
    /// The user's email.
    pub email: String,
    /// First name.
    #[serde(default)]
    pub first_name: Option<String>,
    /// Last name.
    #[serde(default)]
    pub last_name: Option<String>,
}

/// A permission entry: an action and whether the caller may perform it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permission {
    /// The action (e.g. `update`, `delete`).
    pub action: String,
    /// Whether it is allowed.
    pub allowed: bool,
    /// Why not, when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The service's 422 body (`HTTPValidationError`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HttpValidationError {
    /// The validation errors, one per faulty value.
    #[serde(default)]
    pub detail: Vec<ValidationError>,
}

/// One validation error of a 422 body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationError {
    /// Location of the faulty value, e.g. `["body","segment_filters",0,"sample_rate"]`.
    pub loc: Vec<LocItem>,
    /// Human-readable message.
    pub msg: String,
    /// Error type, e.g. `less_than_equal`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The faulty input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
    /// Context of the error (limits, expected values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctx: Option<serde_json::Value>,
}

/// One element of a `loc`: a field name or a list index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LocItem {
    /// A list index.
    Index(i64),
    /// A field name (or a union tag).
    Key(String),
}

impl ValidationError {
    /// A pydantic `value_error` (a validator raised `ValueError(message)`):
    /// `msg` is `"Value error, {message}"` and `ctx` is `{"error": message}`.
    pub fn value_error(loc: Vec<LocItem>, input: Option<serde_json::Value>, message: &str) -> Self {
        ValidationError {
            loc,
            msg: format!("Value error, {message}"),
            kind: "value_error".to_owned(),
            input,
            ctx: Some(serde_json::json!({ "error": message })),
        }
    }

    /// The location as a dotted path: `body.segment_filters[0].sample_rate`.
    pub fn dotted_loc(&self) -> String {
        dotted_loc(&self.loc)
    }
}

/// A `loc` as a dotted path: `body.segment_filters[0].sample_rate`.
pub fn dotted_loc(loc: &[LocItem]) -> String {
    let mut out = String::new();
    for item in loc {
        match item {
            LocItem::Index(i) => out.push_str(&format!("[{i}]")),
            LocItem::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
        }
    }
    out
}

/// An access token from `POST /login` (`Token`). `Debug` never shows the token.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Token {
    /// The bearer token. Secret: never logged.
    pub access_token: Secret,
    /// Always `bearer`.
    #[serde(default = "bearer")]
    pub token_type: String,
}

fn bearer() -> String {
    "bearer".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_loc_reads_like_a_path() {
        let body: HttpValidationError = serde_json::from_str(
            r#"{"detail":[{"loc":["body","segment_filters",0,"sample_rate"],"msg":"Input should be less than or equal to 1","type":"less_than_equal","input":1.5,"ctx":{"le":1}}]}"#,
        )
        .unwrap();
        assert_eq!(
            body.detail[0].dotted_loc(),
            "body.segment_filters[0].sample_rate"
        );
    }

    #[test]
    fn token_debug_is_redacted() {
        let t = Token {
            access_token: Secret::new("s3cr3t"),
            token_type: "bearer".into(),
        };
        assert!(!format!("{t:?}").contains("s3cr3t"));
    }
}

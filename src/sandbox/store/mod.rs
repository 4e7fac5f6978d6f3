//! The sandbox's state and its semantics: every record the service holds
//! (organization, users, projects, log streams, experiments, the scorer
//! catalog, trends dashboards with their sections and widgets, templates,
//! integrations, favorites), as one serializable [`State`] that is at once
//! the fixture format, the `--state` file format and what tests read and
//! change through `SandboxHandle::with_state`.
//!
//! Operations are synchronous functions on `&State` / `&mut State`, one
//! submodule per resource; the HTTP layer (`routes`) validates requests and
//! calls them under the one lock. They return [`ApiError`] for what the
//! service answers with an error (404, 409, 422 on references).
//!
//! No secret value is ever held here: credentials are [`Credential`]s, which
//! are sealed into salted fingerprints when a state is loaded.

mod credential;
pub mod integrations;
mod lookup;
pub mod model;
pub mod projects;
pub mod scorers;
pub mod search;
pub mod sections;
pub mod settings;
pub mod traffic;
pub mod trends;
pub mod users;

pub use credential::Credential;
pub use model::*;

use chrono::{SecondsFormat, Utc};

use super::reply::ApiError;

/// The current time as the service writes it: RFC 3339, UTC, microseconds.
pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Parses an RFC 3339 timestamp (as stored or as sent in a filter).
pub fn parse_time(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    chrono::DateTime::parse_from_rfc3339(s).ok()
}

/// Compares two stored timestamps chronologically (unparsable ones sort first).
pub fn cmp_time(a: &str, b: &str) -> std::cmp::Ordering {
    parse_time(a).cmp(&parse_time(b))
}

/// One page of `items` from `starting_token` (an offset) with `limit` items,
/// and the pagination fields: `paginated` is true and `next_starting_token`
/// set when more items remain.
pub fn paginate<T: Clone>(items: &[T], starting_token: i64, limit: i64) -> (Vec<T>, PageFields) {
    let start = usize::try_from(starting_token.max(0)).unwrap_or(usize::MAX);
    let limit_n = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
    let page: Vec<T> = items.iter().skip(start).take(limit_n).cloned().collect();
    let end = start.saturating_add(page.len());
    let more = end < items.len();
    let fields = PageFields {
        starting_token,
        limit,
        paginated: more,
        next_starting_token: if more { i64::try_from(end).ok() } else { None },
    };
    (page, fields)
}

/// The pagination fields of a paginated response.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PageFields {
    /// The cursor the page starts at.
    pub starting_token: i64,
    /// The page size asked for.
    pub limit: i64,
    /// Whether more pages follow.
    pub paginated: bool,
    /// The cursor of the next page.
    pub next_starting_token: Option<i64>,
}

impl PageFields {
    /// Writes the fields into a response object.
    pub fn write_into(&self, obj: &mut serde_json::Map<String, serde_json::Value>) {
        obj.insert("starting_token".into(), self.starting_token.into());
        obj.insert("limit".into(), self.limit.into());
        obj.insert("paginated".into(), self.paginated.into());
        obj.insert(
            "next_starting_token".into(),
            self.next_starting_token
                .map_or(serde_json::Value::Null, Into::into),
        );
    }

    /// A page response: the pagination fields, then the page's `items`
    /// under `key`.
    pub fn with_items(
        &self,
        key: &str,
        items: Vec<serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut obj = serde_json::Map::new();
        self.write_into(&mut obj);
        obj.insert(key.into(), serde_json::Value::Array(items));
        obj
    }
}

/// Serializes a value that is known to serialize (the sandbox's own records);
/// a failure becomes a 500 rather than a panic.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::Internal(format!("serialize: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pagination_reports_the_next_cursor_only_when_more_remain() {
        let items: Vec<i32> = (0..5).collect();
        let (page, f) = paginate(&items, 0, 2);
        assert_eq!(page, vec![0, 1]);
        assert!(f.paginated);
        assert_eq!(f.next_starting_token, Some(2));
        let (page, f) = paginate(&items, 4, 2);
        assert_eq!(page, vec![4]);
        assert!(!f.paginated);
        assert_eq!(f.next_starting_token, None);
        let (page, f) = paginate(&items, 10, 2);
        assert!(page.is_empty() && !f.paginated);
        let (page, _) = paginate(&items, -3, -1);
        assert!(page.is_empty());
    }
}

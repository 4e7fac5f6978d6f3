//! A run's traffic as the service counts it: the traces and spans it holds
//! (the run search with `include_counts`, the search evalctl already makes to
//! find the run: no request of its own) and how old it is, from its
//! `created_at`, at the time it was read. Plain integers: the judge-call
//! forecast (`crate::plan::forecast`) turns them into figures a day.

use serde::{Deserialize, Serialize};

/// What the run search counted of a run.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Hash,
)]
pub struct Traffic {
    /// Traces the run holds (`num_traces`), when the service counted them.
    pub num_traces: Option<u64>,
    /// Spans the run holds (`num_spans`), when the service counted them.
    pub num_spans: Option<u64>,
    /// Seconds from the run's `created_at` to when it was read (never
    /// negative), when `created_at` could be read.
    pub age_seconds: Option<u64>,
}

impl Traffic {
    /// The traffic of a run with these counts, created at `created_at`
    /// (RFC 3339) and read at `now`.
    pub fn of(
        num_traces: Option<i64>,
        num_spans: Option<i64>,
        created_at: Option<&str>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        let age_seconds = created_at
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| {
                let seconds = (now - t.with_timezone(&chrono::Utc)).num_seconds();
                u64::try_from(seconds).unwrap_or(0)
            });
        Traffic {
            num_traces: count(num_traces),
            num_spans: count(num_spans),
            age_seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn age_is_counted_from_created_at_and_never_negative() {
        let now = chrono::DateTime::parse_from_rfc3339("2025-01-31T00:00:00Z")
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default();
        let t = Traffic::of(Some(3000), Some(-1), Some("2025-01-01T00:00:00Z"), now);
        assert_eq!(t.num_traces, Some(3000));
        assert_eq!(t.num_spans, None);
        assert_eq!(t.age_seconds, Some(30 * 86_400));
        let future = Traffic::of(None, None, Some("2025-02-01T00:00:00+00:00"), now);
        assert_eq!(future.age_seconds, Some(0));
        assert_eq!(
            Traffic::of(None, None, Some("yesterday"), now).age_seconds,
            None
        );
    }
}

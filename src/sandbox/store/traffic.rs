//! The traffic a sandbox log stream keeps receiving: its stored counts
//! (`num_traces`, `num_spans`) are as of [`COUNTS_AS_OF`], and the sandbox
//! serves them grown at the same average rate since, up to the time of the
//! request. So a log stream's counts and its `created_at` stay consistent
//! whenever the sandbox runs: counts over age give the same traces a day
//! (what evalctl's judge-call forecast reads), as on a live service.

use chrono::{DateTime, Utc};

/// When the stored counts of a log stream were counted (the built-in
/// fixtures' "now": 2025-01-31, thirty days after their epoch).
pub const COUNTS_AS_OF: &str = "2025-01-31T00:00:00Z";

fn time(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// `count`, counted at [`COUNTS_AS_OF`] for a log stream created at
/// `created_at`, as it stands at `now`: grown in proportion to the stream's
/// age. A stream created since (or a time that cannot be read) keeps its
/// stored count.
pub fn served_count(count: i64, created_at: &str, now: DateTime<Utc>) -> i64 {
    let (Some(created), Some(as_of)) = (time(created_at), time(COUNTS_AS_OF)) else {
        return count;
    };
    let counted_over = (as_of - created).num_seconds();
    let age = (now - created).num_seconds();
    if counted_over <= 0 || age <= counted_over {
        return count;
    }
    let grown = count as f64 * age as f64 / counted_over as f64;
    grown.round() as i64
}

/// The count a stream created `hours` after the fixtures' epoch holds at
/// [`COUNTS_AS_OF`] when it receives `per_day` a day.
pub fn count_at_as_of(per_day: i64, created_at: &str) -> i64 {
    let (Some(created), Some(as_of)) = (time(created_at), time(COUNTS_AS_OF)) else {
        return per_day;
    };
    let seconds = (as_of - created).num_seconds().max(0);
    (per_day as f64 * seconds as f64 / 86_400.0).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> DateTime<Utc> {
        time(t).unwrap_or_default()
    }

    #[test]
    fn counts_grow_with_age_at_the_same_rate() {
        // Created on the 1st, 30 days to the 31st: 42,000 traces, 1,400 a day.
        let created = "2025-01-01T00:00:00Z";
        assert_eq!(count_at_as_of(1400, created), 42_000);
        // Sixty days old: twice the traces, still 1,400 a day.
        assert_eq!(
            served_count(42_000, created, at("2025-03-02T00:00:00Z")),
            84_000
        );
        // Before the counts were taken, they are served as stored.
        assert_eq!(
            served_count(42_000, created, at("2025-01-15T00:00:00Z")),
            42_000
        );
        // A stream created after them keeps its own.
        assert_eq!(
            served_count(7, "2025-06-01T00:00:00Z", at("2026-01-01T00:00:00Z")),
            7
        );
    }
}

//! Counters of what the client did: requests sent per operation and method,
//! retries, 429 answers, failures and re-logins. [`Stats::snapshot`] returns a
//! deterministic copy (a `BTreeMap`) that benchmarks print.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::operation::Operation;

/// Counters of one operation (or of all of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    /// HTTP requests sent (every attempt counts).
    pub requests: u64,
    /// Attempts after the first.
    pub retries: u64,
    /// Answers with status 429.
    pub rate_limited: u64,
    /// Operations that ended in an error.
    pub failures: u64,
    /// Logins done again after a 401 with a bearer token.
    pub relogins: u64,
}

impl Counters {
    fn add(&mut self, other: &Counters) {
        self.requests += other.requests;
        self.retries += other.retries;
        self.rate_limited += other.rate_limited;
        self.failures += other.failures;
        self.relogins += other.relogins;
    }
}

/// A snapshot of the counters, keyed by `"METHOD operation_name"`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct StatsSnapshot {
    /// Per operation, sorted by key.
    pub operations: BTreeMap<String, Counters>,
    /// The sum over every operation.
    pub total: Counters,
}

impl std::fmt::Display for StatsSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = self
            .operations
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(5);
        writeln!(
            f,
            "{:width$}  {:>8}  {:>7}  {:>5}  {:>8}  {:>8}",
            "operation", "requests", "retries", "429s", "failures", "relogins"
        )?;
        let rows = self
            .operations
            .iter()
            .map(|(k, c)| (k.as_str(), c))
            .chain(std::iter::once(("total", &self.total)));
        for (key, c) in rows {
            writeln!(
                f,
                "{key:width$}  {:>8}  {:>7}  {:>5}  {:>8}  {:>8}",
                c.requests, c.retries, c.rate_limited, c.failures, c.relogins
            )?;
        }
        Ok(())
    }
}

/// The live counters of a client, keyed by (method, operation name): no
/// allocation per request.
#[derive(Debug, Default)]
pub struct Stats {
    by_op: Mutex<BTreeMap<(&'static str, &'static str), Counters>>,
}

impl Stats {
    /// Applies `f` to the counters of `op`.
    pub fn record(&self, op: &'static Operation, f: impl FnOnce(&mut Counters)) {
        let mut map = self.by_op.lock().unwrap_or_else(|p| p.into_inner());
        f(map.entry((op.method.as_str(), op.name)).or_default());
    }

    /// A copy of the counters, keyed by `"METHOD operation_name"`.
    pub fn snapshot(&self) -> StatsSnapshot {
        let map = self.by_op.lock().unwrap_or_else(|p| p.into_inner());
        let mut total = Counters::default();
        let mut operations = BTreeMap::new();
        for (&(method, name), c) in map.iter() {
            total.add(c);
            operations.insert(format!("{method} {name}"), *c);
        }
        StatsSnapshot { operations, total }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::operation::{GET_USER, LOGIN};

    #[test]
    fn snapshot_sums_and_sorts() {
        let s = Stats::default();
        s.record(&GET_USER, |c| c.requests += 2);
        s.record(&LOGIN, |c| {
            c.requests += 1;
            c.rate_limited += 1;
        });
        let snap = s.snapshot();
        let keys: Vec<&str> = snap.operations.keys().map(String::as_str).collect();
        assert_eq!(keys, ["GET get_user", "POST login"]);
        assert_eq!(snap.total.requests, 3);
        assert_eq!(snap.total.rate_limited, 1);
        let text = snap.to_string();
        assert!(text.lines().last().unwrap().starts_with("total"), "{text}");
    }
}

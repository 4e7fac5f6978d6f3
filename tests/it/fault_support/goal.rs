//! The fault suite's goal runs (issue 10 §2): many seeded runs, each under
//! one fault profile, and the figures they add up to.
//!
//! A run applies the suite's repo to a fresh sandbox under its profile's
//! faults until it converges (at most [`MAX_APPLIES`] applies): after each
//! apply, with faults off, live state is read and `plan --detailed-exitcode`
//! run; converged means the plan is empty and live equals the hand-written
//! desired state. Every apply must be honest about what it did.

use std::time::Duration;

use evalctl::sandbox::Faults;

/// The most applies one run makes before it is counted as not converging.
pub const MAX_APPLIES: usize = 4;

/// Latency of every request in the goal runs (so that a run's time is the
/// service's, not the process start's).
pub const BASE_LATENCY: Duration = Duration::from_millis(50);

/// The fault profiles, one per run in turn (by seed).
pub const PROFILES: [&str; 5] = [
    "30% 5xx",
    "30% dropped connections",
    "30% 429",
    "latency spikes",
    "all at once",
];

/// The faults of profile `PROFILES[seed % 5]`, seeded with `seed`.
///
/// - `30% 5xx`: 500/502/503/504, half answered before processing, half after;
/// - `30% dropped connections`: half before processing, half after;
/// - `30% 429`: `Retry-After: 1`;
/// - `latency spikes`: 30% of requests 400 ms slower (below the client's
///   timeout: a request the service answers after the client gave up is
///   the subject of `latency_spikes_past_the_client_timeout`);
/// - `all at once`: 5% each of the 5xx (500/502/503/504) and drop kinds before and
///   after processing, 10% 429, 10% spikes.
pub fn profile(seed: u64) -> Faults {
    let base = Faults {
        latency: BASE_LATENCY,
        jitter: Duration::from_millis(10),
        seed,
        ..Faults::none()
    };
    match seed % 5 {
        0 => Faults {
            fail_rate: 0.15,
            fail_after_rate: 0.15,
            ..base
        },
        1 => Faults {
            drop_rate: 0.15,
            drop_after_rate: 0.15,
            ..base
        },
        2 => Faults {
            throttle_rate: 0.3,
            retry_after_secs: 1,
            ..base
        },
        3 => Faults {
            spike_rate: 0.3,
            spike: Duration::from_millis(400),
            ..base
        },
        _ => Faults {
            fail_rate: 0.05,
            fail_after_rate: 0.05,
            drop_rate: 0.05,
            drop_after_rate: 0.05,
            throttle_rate: 0.1,
            retry_after_secs: 1,
            spike_rate: 0.1,
            spike: Duration::from_millis(400),
            ..base
        },
    }
}

/// The same latency, no fault: the reference for times.
pub fn no_faults(seed: u64) -> Faults {
    Faults {
        latency: BASE_LATENCY,
        jitter: Duration::from_millis(10),
        seed,
        ..Faults::none()
    }
}

/// What one run did.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Its seed.
    pub seed: u64,
    /// Applies until converged (`None`: not within [`MAX_APPLIES`]).
    pub applies: Option<usize>,
    /// Exit status of each apply.
    pub exits: Vec<i32>,
    /// Time of the first apply.
    pub first_apply: Duration,
    /// Names found twice after any apply.
    pub duplicates: usize,
    /// Ways live differed from desired at the end (duplicates aside).
    pub lost_updates: usize,
}

/// The figures of many runs.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Every run.
    pub runs: Vec<RunResult>,
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

impl Figures {
    /// Runs whose first apply converged.
    pub fn first_apply_converged(&self) -> usize {
        self.runs.iter().filter(|r| r.applies == Some(1)).count()
    }

    /// The most applies a run needed (`None` when one did not converge).
    pub fn max_applies(&self) -> Option<usize> {
        self.runs
            .iter()
            .map(|r| r.applies)
            .try_fold(0, |max, a| a.map(|a| max.max(a)))
    }

    /// Names found twice, in all runs.
    pub fn duplicates(&self) -> usize {
        self.runs.iter().map(|r| r.duplicates).sum()
    }

    /// Lost updates, in all runs.
    pub fn lost_updates(&self) -> usize {
        self.runs.iter().map(|r| r.lost_updates).sum()
    }

    /// The median first-apply time of the runs of profile `p`.
    pub fn median_first_apply(&self, p: usize) -> Duration {
        median(
            self.runs
                .iter()
                .filter(|r| r.seed % 5 == p as u64)
                .map(|r| r.first_apply)
                .collect(),
        )
    }

    /// The figures as the suite prints them (and the README shows them).
    pub fn render(&self, no_fault: Duration) -> String {
        let n = self.runs.len();
        let first = self.first_apply_converged();
        let pct = if n == 0 {
            0.0
        } else {
            100.0 * first as f64 / n as f64
        };
        let max = self
            .max_applies()
            .map_or_else(|| format!("more than {MAX_APPLIES}"), |m| m.to_string());
        let mut out = format!(
            "fault goal: {n} runs; first apply converged in {first} ({pct:.1}%); \
             most applies needed: {max}; duplicates: {}; lost updates: {}\n",
            self.duplicates(),
            self.lost_updates()
        );
        let mut exits: std::collections::BTreeMap<i32, usize> = std::collections::BTreeMap::new();
        for r in &self.runs {
            if let Some(e) = r.exits.first() {
                *exits.entry(*e).or_default() += 1;
            }
        }
        let exits: Vec<String> = exits
            .iter()
            .map(|(e, n)| format!("exit {e}: {n}"))
            .collect();
        out.push_str(&format!(
            "  first applies: {}; without faults (same latency) a first apply takes {:.2}s\n",
            exits.join(", "),
            no_fault.as_secs_f64()
        ));
        for (p, name) in PROFILES.iter().enumerate() {
            let of: Vec<&RunResult> = self
                .runs
                .iter()
                .filter(|r| r.seed % 5 == p as u64)
                .collect();
            if of.is_empty() {
                continue;
            }
            let converged = of.iter().filter(|r| r.applies == Some(1)).count();
            let t = self.median_first_apply(p);
            let ratio = if no_fault.is_zero() {
                0.0
            } else {
                t.as_secs_f64() / no_fault.as_secs_f64()
            };
            out.push_str(&format!(
                "  {name:<24} {:>4} runs, first apply converged in {converged:>4}, median first apply {:.2}s ({ratio:.1}x no-fault)\n",
                of.len(),
                t.as_secs_f64()
            ));
        }
        out
    }
}

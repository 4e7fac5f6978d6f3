//! Fault injection and the request log.
//!
//! [`Faults`] (all off by default) describe what goes wrong: added latency
//! (fixed plus jitter), latency spikes (a fraction of requests delayed long
//! enough to exceed client timeouts), 5xx answers (500/502/503/504, or the
//! statuses chosen) either before processing or after it (the change is
//! applied, then the answer fails: what makes a create ambiguous), 429s with
//! `Retry-After`, a
//! request-rate limit (token bucket: over N requests per second is a 429),
//! and dropped connections (closed without a response, before or after
//! processing).
//!
//! Decisions are deterministic under [`Faults::seed`]: the fate of the
//! request with sequence number `n` depends only on the seed and `n` (and,
//! for the rate limit, on time). Every request is logged as a
//! [`RequestRecord`] (sequence, method, path, query, status, fault,
//! authenticated user) that tests read through the handle.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

/// What goes wrong, and how often. Rates are fractions in `[0, 1]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Faults {
    /// Added to every request.
    pub latency: Duration,
    /// A uniformly random extra delay in `[0, jitter]`.
    pub jitter: Duration,
    /// Fraction of requests delayed by [`Faults::spike`] more.
    pub spike_rate: f64,
    /// The delay of a spike.
    pub spike: Duration,
    /// Fraction answered 5xx before processing.
    pub fail_rate: f64,
    /// Fraction processed, then answered 5xx.
    pub fail_after_rate: f64,
    /// The statuses of injected 5xx answers, one drawn per fault; empty for
    /// [`FAIL_STATUSES`].
    pub fail_statuses: Vec<u16>,
    /// Fraction answered 429 with `Retry-After`.
    pub throttle_rate: f64,
    /// The `Retry-After` of injected 429s, in seconds.
    pub retry_after_secs: u64,
    /// Requests per second allowed (token bucket, burst of one second's
    /// worth); more is a 429 with `Retry-After`.
    pub rate_limit: Option<f64>,
    /// Fraction whose connection is closed without a response, before
    /// processing.
    pub drop_rate: f64,
    /// Fraction processed, then closed without a response.
    pub drop_after_rate: f64,
    /// Seed of the decisions.
    pub seed: u64,
    /// Only requests whose path contains this are subject to faults
    /// (latency included); `None` for all. Ending in `$`, only those whose
    /// path ends with the rest: `/v2/scorers$` is a scorer's create
    /// (`POST /v2/scorers`), not the listing (`POST /v2/scorers/list`) nor
    /// a version's create, which `/v2/scorers` also matches.
    pub path_contains: Option<String>,
    /// Only requests of this method (`PATCH`) are subject to faults; `None`
    /// for all.
    pub method: Option<String>,
}

/// Whether `path` is one [`Faults::path_contains`] selects: it contains
/// `filter`, or, when `filter` ends in `$`, ends with the rest.
fn path_matches(path: &str, filter: &str) -> bool {
    match filter.strip_suffix('$') {
        Some(end) => path.ends_with(end),
        None => path.contains(filter),
    }
}

/// The statuses injected 5xx answers draw from by default: 500 as well as
/// the gateway's 502, 503 and 504.
pub const FAIL_STATUSES: [u16; 4] = [500, 502, 503, 504];

impl Faults {
    /// No faults.
    pub fn none() -> Self {
        Self::default()
    }

    /// Whether any fault is configured.
    pub fn is_active(&self) -> bool {
        !self.latency.is_zero()
            || !self.jitter.is_zero()
            || (self.spike_rate > 0.0 && !self.spike.is_zero())
            || self.rate_limit.is_some()
            || [
                self.fail_rate,
                self.fail_after_rate,
                self.throttle_rate,
                self.drop_rate,
                self.drop_after_rate,
            ]
            .iter()
            .any(|r| *r > 0.0)
    }

    /// Checks that rates are fractions and durations sane.
    pub fn validate(&self) -> Result<(), super::SandboxError> {
        for (option, rate) in [
            ("spike_rate", self.spike_rate),
            ("fail_rate", self.fail_rate),
            ("fail_after_rate", self.fail_after_rate),
            ("throttle_rate", self.throttle_rate),
            ("drop_rate", self.drop_rate),
            ("drop_after_rate", self.drop_after_rate),
        ] {
            if !(0.0..=1.0).contains(&rate) {
                return Err(super::SandboxError::BadOption {
                    option,
                    reason: format!("{rate} is not a fraction between 0 and 1"),
                });
            }
        }
        if let Some(r) = self.rate_limit
            && !(r.is_finite() && r > 0.0)
        {
            return Err(super::SandboxError::BadOption {
                option: "rate_limit",
                reason: format!("{r} is not a positive number of requests per second"),
            });
        }
        if let Some(bad) = self
            .fail_statuses
            .iter()
            .find(|s| !(500..=599).contains(*s))
        {
            return Err(super::SandboxError::BadOption {
                option: "fail_statuses",
                reason: format!("{bad} is not a 5xx status"),
            });
        }
        Ok(())
    }
}

/// The longest delay the sandbox injects (longer settings are capped).
pub const MAX_DELAY: Duration = Duration::from_secs(24 * 3600);

/// The fault applied to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "status")]
pub enum Fault {
    /// Answered 5xx without processing.
    FailBefore(u16),
    /// Processed, then answered 5xx.
    FailAfter(u16),
    /// Answered 429 (injected).
    Throttle,
    /// Answered 429 by the rate limit.
    RateLimit,
    /// Closed without a response, not processed.
    Drop,
    /// Processed, then closed without a response.
    DropAfter,
}

impl Fault {
    /// Whether the request reaches its handler.
    pub fn processes(&self) -> bool {
        matches!(self, Fault::FailAfter(_) | Fault::DropAfter)
    }
}

/// What happens to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Delay before anything else.
    pub delay: Duration,
    /// Whether the delay includes a spike.
    pub spiked: bool,
    /// The fault, if any.
    pub fault: Option<Fault>,
}

/// A logged request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestRecord {
    /// 1 for the first request of the sandbox, then counting.
    pub seq: u64,
    /// HTTP method.
    pub method: String,
    /// Path (no query).
    pub path: String,
    /// The raw query string, if any.
    pub query: Option<String>,
    /// The status sent; `None` when the connection was dropped.
    pub status: Option<u16>,
    /// The fault applied.
    pub fault: Option<Fault>,
    /// Whether a latency spike was applied.
    pub spiked: bool,
    /// Email of the authenticated caller, when authentication succeeded.
    pub user: Option<String>,
}

/// The runtime side of faults: the configuration and the token bucket.
#[derive(Debug)]
pub struct FaultState {
    faults: Faults,
    tokens: f64,
    refilled: Instant,
}

impl FaultState {
    /// A state for `faults`, with a full bucket.
    pub fn new(faults: Faults) -> Self {
        FaultState {
            tokens: faults.rate_limit.unwrap_or(0.0).max(1.0),
            faults,
            refilled: Instant::now(),
        }
    }

    /// The configuration.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Replaces the configuration (the bucket starts full).
    pub fn set(&mut self, faults: Faults) {
        *self = FaultState::new(faults);
    }

    /// Decides the fate of request `seq`, a `method` to `path`.
    pub fn decide(&mut self, seq: u64, method: &str, path: &str) -> Decision {
        let f = &self.faults;
        if f.path_contains
            .as_deref()
            .is_some_and(|p| !path_matches(path, p))
            || f.method
                .as_deref()
                .is_some_and(|m| !m.eq_ignore_ascii_case(method))
        {
            return Decision {
                delay: Duration::ZERO,
                spiked: false,
                fault: None,
            };
        }
        if let Some(rate) = f.rate_limit {
            let now = Instant::now();
            let capacity = rate.max(1.0);
            self.tokens = (self.tokens + now.duration_since(self.refilled).as_secs_f64() * rate)
                .min(capacity);
            self.refilled = now;
            if self.tokens >= 1.0 {
                self.tokens -= 1.0;
            } else {
                return Decision {
                    delay: Duration::ZERO,
                    spiked: false,
                    fault: Some(Fault::RateLimit),
                };
            }
        }
        let mut rng = fastrand::Rng::with_seed(mix(f.seed, seq));
        let mut delay = f.latency;
        if !f.jitter.is_zero() {
            delay = delay.saturating_add(f.jitter.mul_f64(rng.f64()));
        }
        let spiked = rng.f64() < f.spike_rate;
        if spiked {
            delay = delay.saturating_add(f.spike);
        }
        let delay = delay.min(MAX_DELAY);
        let statuses: &[u16] = if f.fail_statuses.is_empty() {
            &FAIL_STATUSES
        } else {
            &f.fail_statuses
        };
        let code = statuses[rng.usize(..statuses.len())];
        let draw = rng.f64();
        let mut at = 0.0;
        let mut pick = |rate: f64| {
            at += rate;
            draw < at
        };
        let fault = if pick(f.drop_rate) {
            Some(Fault::Drop)
        } else if pick(f.drop_after_rate) {
            Some(Fault::DropAfter)
        } else if pick(f.throttle_rate) {
            Some(Fault::Throttle)
        } else if pick(f.fail_rate) {
            Some(Fault::FailBefore(code))
        } else if pick(f.fail_after_rate) {
            Some(Fault::FailAfter(code))
        } else {
            None
        };
        Decision {
            delay,
            spiked,
            fault,
        }
    }

    /// Seconds a rate-limited client should wait for the next token.
    pub fn retry_after(&self, fault: Fault) -> u64 {
        match fault {
            Fault::RateLimit => {
                let rate = self.faults.rate_limit.unwrap_or(1.0);
                ((1.0 - self.tokens).max(0.0) / rate).ceil().max(1.0) as u64
            }
            _ => self.faults.retry_after_secs.max(1),
        }
    }
}

/// SplitMix64 of the seed and the sequence number: independent streams per
/// request.
fn mix(seed: u64, seq: u64) -> u64 {
    let mut z = seed ^ seq.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The authenticated caller of a request, filled in by authentication and
/// read by the request log.
#[derive(Debug, Clone, Default)]
pub struct CallerSlot(Arc<Mutex<Option<String>>>);

impl CallerSlot {
    /// Records the caller's email.
    pub fn set(&self, email: &str) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(email.to_owned());
        }
    }

    /// The caller's email, if authenticated.
    pub fn get(&self) -> Option<String> {
        self.0.lock().ok().and_then(|s| s.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fates(faults: &Faults) -> Vec<Decision> {
        let mut state = FaultState::new(faults.clone());
        (1..=200).map(|n| state.decide(n, "GET", "/v2/x")).collect()
    }

    #[test]
    fn decisions_depend_only_on_seed_and_sequence() {
        let faults = Faults {
            fail_rate: 0.2,
            throttle_rate: 0.1,
            drop_rate: 0.05,
            jitter: Duration::from_millis(10),
            seed: 42,
            ..Faults::default()
        };
        assert_eq!(fates(&faults), fates(&faults));
        let other = fates(&Faults {
            seed: 43,
            ..faults.clone()
        });
        assert_ne!(fates(&faults), other);
        let failed = fates(&faults)
            .iter()
            .filter(|d| matches!(d.fault, Some(Fault::FailBefore(_))))
            .count();
        assert!((20..=60).contains(&failed), "{failed}");
        assert!(fates(&Faults::none()).iter().all(|d| d.fault.is_none()));
        assert!(!Faults::none().is_active() && faults.is_active());
    }

    #[test]
    fn injected_5xx_include_500_and_follow_the_filters() {
        let all = Faults {
            fail_rate: 1.0,
            seed: 9,
            ..Faults::default()
        };
        let codes: std::collections::BTreeSet<u16> = fates(&all)
            .iter()
            .filter_map(|d| match d.fault {
                Some(Fault::FailBefore(code)) => Some(code),
                _ => None,
            })
            .collect();
        assert_eq!(codes.into_iter().collect::<Vec<_>>(), FAIL_STATUSES);
        let mut only = FaultState::new(Faults {
            fail_statuses: vec![500],
            method: Some("PATCH".into()),
            ..all
        });
        assert_eq!(only.decide(1, "GET", "/v2/x").fault, None);
        assert_eq!(
            only.decide(2, "PATCH", "/v2/x").fault,
            Some(Fault::FailBefore(500))
        );
        assert!(
            Faults {
                fail_statuses: vec![404],
                ..Faults::default()
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn the_token_bucket_limits_bursts() {
        let mut state = FaultState::new(Faults {
            rate_limit: Some(5.0),
            ..Faults::default()
        });
        let limited = (1..=20)
            .filter(|n| state.decide(*n, "GET", "/").fault == Some(Fault::RateLimit))
            .count();
        assert!(limited >= 14, "{limited}");
        assert!(state.retry_after(Fault::RateLimit) >= 1);
    }

    #[test]
    fn out_of_range_rates_are_refused() {
        assert!(
            Faults {
                fail_rate: 1.5,
                ..Faults::default()
            }
            .validate()
            .is_err()
        );
        assert!(
            Faults {
                rate_limit: Some(0.0),
                ..Faults::default()
            }
            .validate()
            .is_err()
        );
        assert!(Faults::none().validate().is_ok());
    }

    #[test]
    fn a_path_filter_ending_in_a_dollar_matches_the_end_of_the_path_only() {
        let faults = Faults {
            fail_rate: 1.0,
            path_contains: Some("/v2/scorers$".into()),
            ..Faults::none()
        };
        let mut state = FaultState::new(faults);
        let hit =
            |state: &mut FaultState, path: &str| state.decide(1, "POST", path).fault.is_some();
        assert!(hit(&mut state, "/v2/scorers"));
        assert!(!hit(&mut state, "/v2/scorers/list"));
        assert!(!hit(&mut state, "/v2/scorers/abc/version/llm"));
        assert!(
            path_matches("/v2/scorers/list", "/v2/scorers"),
            "a substring, as before"
        );
    }
}

//! When to try a request again, and how long to wait first: which outcomes
//! are retryable, whether a create provably was not processed, capped
//! exponential backoff with full jitter, and `Retry-After` (seconds or an HTTP
//! date). Pure functions; the request loop in `transport` applies them.

use std::time::{Duration, SystemTime};

use super::config::RetryPolicy;

tokio::task_local! {
    /// The counted attempts each request of a [`with_attempts`] scope may make.
    static ATTEMPTS: u32;
}

/// Runs `work` with at most `attempts` counted attempts for each request it sends,
/// instead of the policy's: for a caller that sends a write again itself (settling an
/// unclear answer) and so shares one budget, `--max-retries`, with the client's retries.
pub async fn with_attempts<F: Future>(attempts: u32, work: F) -> F::Output {
    ATTEMPTS.scope(attempts, work).await
}

/// The counted attempts a request may make: the scope's ([`with_attempts`]) or the
/// policy's.
pub fn max_attempts(policy: &RetryPolicy) -> u32 {
    ATTEMPTS
        .try_with(|attempts| *attempts)
        .unwrap_or(policy.max_attempts)
        .max(1)
}

/// What one attempt's outcome means for retrying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// A final answer (success or an error that retrying cannot fix).
    Final,
    /// A transient failure.
    Transient {
        /// The service certainly did not process the request (connection
        /// refused before sending, 429), so even a create may be resent.
        unprocessed: bool,
        /// What happened, for messages (`503`, `timed out`, ...).
        cause: String,
        /// How long the service asked to wait.
        retry_after: Option<Duration>,
    },
}

/// Classifies an HTTP status. 429 is transient and unprocessed. For a read,
/// every 5xx but 501 and 505 (which no retry changes) is transient; for a
/// write 500, 502, 503 and 504 are: whether the service applied the write
/// is unknown after any of them (a 500 is no more final than a 502), and an
/// idempotent write may be sent again (a create never is: the transport
/// makes an unprocessed-unknown failure of a create [`Class::Final`]'s
/// ambiguous error). Transient 5xx leave processing unknown. Anything else
/// is final.
pub fn classify_status(status: u16, retry_after: Option<Duration>, read: bool) -> Class {
    let transient_5xx = if read {
        (500..=599).contains(&status) && status != 501 && status != 505
    } else {
        status == 500 || (502..=504).contains(&status)
    };
    if status == 429 {
        Class::Transient {
            unprocessed: true,
            cause: "429 Too Many Requests".to_owned(),
            retry_after,
        }
    } else if transient_5xx {
        Class::Transient {
            unprocessed: false,
            cause: format!("{status} {}", status_reason(status))
                .trim_end()
                .to_owned(),
            retry_after,
        }
    } else {
        Class::Final
    }
}

/// Classifies a transport error: a failure to connect is unprocessed; a
/// timeout, a reset or a closed connection after sending is not.
pub fn classify_transport(err: &reqwest::Error) -> Class {
    if err.is_connect() {
        Class::Transient {
            unprocessed: true,
            cause: "connection failed".to_owned(),
            retry_after: None,
        }
    } else if err.is_timeout() {
        Class::Transient {
            unprocessed: false,
            cause: "timed out".to_owned(),
            retry_after: None,
        }
    } else if err.is_builder() || err.is_redirect() {
        Class::Final
    } else {
        Class::Transient {
            unprocessed: false,
            cause: "connection closed or reset before a complete answer".to_owned(),
            retry_after: None,
        }
    }
}

fn status_reason(status: u16) -> &'static str {
    match status {
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// The backoff ceiling before retry number `retry` (0 for the first retry):
/// `min(max_delay, base_delay * 2^retry)`.
pub fn backoff_ceiling(policy: &RetryPolicy, retry: u32) -> Duration {
    let factor = 2u32.saturating_pow(retry.min(31));
    policy
        .base_delay
        .checked_mul(factor)
        .unwrap_or(policy.max_delay)
        .min(policy.max_delay)
}

/// Full jitter: a uniformly random wait in `[0, ceiling]`.
pub fn full_jitter(ceiling: Duration, rng: &mut fastrand::Rng) -> Duration {
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rng.u64(0..=nanos))
}

/// The wait before retry number `retry`: the service's `Retry-After` when it
/// gave one (plus a small jitter so that waiting tasks do not all resume at
/// the same instant), else full jitter under the backoff ceiling.
pub fn next_wait(
    policy: &RetryPolicy,
    retry: u32,
    retry_after: Option<Duration>,
    rng: &mut fastrand::Rng,
) -> Duration {
    match retry_after {
        Some(after) => after + full_jitter(policy.base_delay, rng),
        None => full_jitter(backoff_ceiling(policy, retry), rng),
    }
}

/// Parses a `Retry-After` value: delay seconds (`120`) or an HTTP date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`), relative to `now`. A date in the past
/// is a zero wait; anything else unparseable is `None`.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480); // 2015-10-21 07:28:00
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
    }

    #[test]
    fn backoff_is_capped_exponential() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            ..RetryPolicy::default()
        };
        let c: Vec<u128> = (0..6).map(|r| backoff_ceiling(&p, r).as_millis()).collect();
        assert_eq!(c, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(backoff_ceiling(&p, u32::MAX), Duration::from_secs(1));
    }

    #[test]
    fn jitter_stays_within_bounds() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            ..RetryPolicy::default()
        };
        let mut rng = fastrand::Rng::with_seed(7);
        for retry in 0..10 {
            let ceiling = backoff_ceiling(&p, retry);
            for _ in 0..200 {
                let w = next_wait(&p, retry, None, &mut rng);
                assert!(w <= ceiling, "{w:?} > {ceiling:?}");
            }
        }
        // Full jitter spreads over the whole range, not just the top half.
        let waits: Vec<Duration> = (0..500).map(|_| next_wait(&p, 3, None, &mut rng)).collect();
        assert!(waits.iter().any(|w| *w < Duration::from_millis(200)));
        assert!(waits.iter().any(|w| *w > Duration::from_millis(600)));
        // Retry-After is a floor.
        for _ in 0..100 {
            let w = next_wait(&p, 0, Some(Duration::from_secs(3)), &mut rng);
            assert!(
                w >= Duration::from_secs(3) && w <= Duration::from_millis(3100),
                "{w:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn waits_never_exceed_the_cap(
            base_ms in 1u64..5_000,
            cap_ms in 1u64..60_000,
            retry in 0u32..1_000,
            seed in proptest::prelude::any::<u64>(),
        ) {
            let p = RetryPolicy {
                base_delay: Duration::from_millis(base_ms),
                max_delay: Duration::from_millis(cap_ms),
                ..RetryPolicy::default()
            };
            let mut rng = fastrand::Rng::with_seed(seed);
            let ceiling = backoff_ceiling(&p, retry);
            proptest::prop_assert!(ceiling <= p.max_delay);
            proptest::prop_assert!(ceiling >= p.base_delay.min(p.max_delay));
            proptest::prop_assert!(next_wait(&p, retry, None, &mut rng) <= ceiling);
        }
    }

    #[test]
    fn statuses_classify() {
        for read in [true, false] {
            assert_eq!(classify_status(200, None, read), Class::Final);
            assert_eq!(classify_status(404, None, read), Class::Final);
            assert_eq!(classify_status(501, None, read), Class::Final);
            assert!(matches!(
                classify_status(429, Some(Duration::from_secs(1)), read),
                Class::Transient {
                    unprocessed: true,
                    retry_after: Some(_),
                    ..
                }
            ));
            // A 500 is as unclear as a 502, 503 or 504, for a write too.
            for s in [500, 502, 503, 504] {
                assert!(matches!(
                    classify_status(s, None, read),
                    Class::Transient {
                        unprocessed: false,
                        ..
                    }
                ));
            }
            assert!(matches!(
                classify_status(500, None, read),
                Class::Transient { cause, .. } if cause == "500 Internal Server Error"
            ));
        }
        // 501 and 505 no retry changes; other 5xx only a read retries.
        assert_eq!(classify_status(505, None, false), Class::Final);
        assert_eq!(classify_status(599, None, false), Class::Final);
        assert!(matches!(
            classify_status(599, None, true),
            Class::Transient { cause, .. } if cause == "599"
        ));
    }
}

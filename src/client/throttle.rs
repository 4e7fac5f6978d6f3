//! The client's one shared throttle: every request of a [`super::Client`] (and
//! of its clones) takes a slot here, so the client adapts as a whole, not each
//! task alone. `--concurrency` is its ceiling; within it the limit adapts:
//!
//! - **Slow start.** The limit starts at [`INITIAL_LIMIT`] (Terraform's fixed
//!   parallelism is 10) and grows by one per answer, doubling every round
//!   trip, until the first sign of congestion or the ceiling.
//! - **Additive increase.** After that it grows by `1/limit` per answer
//!   (about one per round trip). It grows only while the client uses at least
//!   half of it: a limit that is not used proves nothing.
//! - **429.** Halves the limit, once per congestion window: a 429 answering
//!   a request sent before the last decrease is the same event (TCP's rule).
//!   It never goes below the start (a service that answers 429 to 8 requests
//!   at once is throttled by `Retry-After`, below). The request waits out its
//!   `Retry-After` while keeping its slot, so 429s cannot cycle through the
//!   queue: at most `limit` requests wait at once, and when they fill the
//!   limit nothing new is sent until they resume.
//! - **Rising latency.** Each operation has a baseline latency (a moving
//!   value that follows faster answers quickly and slower ones slowly: about
//!   500 answers to move halfway). Each window of answers (at least `limit`
//!   of them, so about one round trip) compares the median of
//!   `latency / baseline` with [`LATENCY_TOLERANCE`]: above it, the limit
//!   shrinks in proportion (at most halved per window, down to 1). A few slow
//!   answers move a median not at all; a service slowing down under load
//!   moves it at once.
//!
//! Without adaptation the limit is the ceiling, always.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

/// Where the limit starts (or the ceiling, when lower), and how low a 429
/// takes it.
pub const INITIAL_LIMIT: usize = 8;
/// The median `latency / baseline` of a window above which the limit shrinks.
pub const LATENCY_TOLERANCE: f64 = 2.0;
/// The fewest answers a latency window holds.
const MIN_WINDOW: usize = 8;
/// How fast the baseline follows an answer faster than it.
const BASELINE_DOWN: f64 = 0.25;
/// How fast the baseline follows an answer slower than it.
const BASELINE_UP: f64 = 1.0 / 720.0;

/// The shared throttle.
#[derive(Debug)]
pub struct Throttle {
    state: Mutex<State>,
    notify: Notify,
    max: usize,
    floor: usize,
    adaptive: bool,
}

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    /// Requests sent so far: the sequence number of the next one.
    sent: u64,
    /// A 429 answering a request numbered below this is part of the
    /// congestion event that last lowered the limit.
    recovery: u64,
    /// Still in slow start (no congestion seen yet).
    slow_start: bool,
    /// Baseline latency per operation, in seconds.
    baselines: HashMap<&'static str, f64>,
    /// `latency / baseline` of the answers of the current window.
    window: Vec<f64>,
    /// Limit decreases so far: on 429, on latency.
    decreases: (u64, u64),
}

/// A slot of the limit; released on drop.
#[derive(Debug)]
pub struct Permit<'a> {
    throttle: &'a Throttle,
    seq: u64,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        {
            // A poisoned lock is recovered, not skipped: skipping would leak
            // the slot for good.
            let mut s = self.throttle.lock();
            s.in_flight = s.in_flight.saturating_sub(1);
        }
        self.throttle.notify.notify_waiters();
    }
}

/// What the throttle did, for the logs: the limit after an answer, and
/// whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adjusted {
    /// Unchanged (whole requests).
    Kept(usize),
    /// Raised to this.
    Raised(usize),
    /// Lowered to this, because of a 429.
    LoweredOn429(usize),
    /// Lowered to this, because the latency rose this many times over the
    /// baseline (the window's median, in tenths).
    LoweredOnLatency(usize, u32),
}

impl Throttle {
    /// A throttle with ceiling `max` (at least 1); adaptive or fixed at `max`.
    pub fn new(max: usize, adaptive: bool) -> Self {
        let max = max.max(1);
        let floor = INITIAL_LIMIT.min(max);
        Throttle {
            state: Mutex::new(State {
                limit: if adaptive { floor } else { max } as f64,
                in_flight: 0,
                sent: 0,
                recovery: 0,
                slow_start: true,
                baselines: HashMap::new(),
                window: Vec::new(),
                decreases: (0, 0),
            }),
            notify: Notify::new(),
            max,
            floor,
            adaptive,
        }
    }

    /// Waits for a slot under the limit.
    pub async fn acquire(&self) -> Permit<'_> {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut s = self.lock();
                let limit = whole(s.limit);
                if s.in_flight < limit {
                    s.in_flight += 1;
                    let seq = s.sent;
                    s.sent += 1;
                    return Permit {
                        throttle: self,
                        seq,
                    };
                }
            }
            notified.await;
        }
    }

    /// Records an answer that is not a 429 and not a 5xx to a request of
    /// operation `op` (whose slot is still held), which took `latency`: grows
    /// the limit, or lowers it when the window's latency rose past the
    /// tolerance.
    pub fn answered(&self, op: &'static str, latency: Duration) -> Adjusted {
        if !self.adaptive {
            return Adjusted::Kept(self.max);
        }
        let adjusted = {
            let mut s = self.lock();
            let before = whole(s.limit);
            let sample = latency.as_secs_f64().max(1e-6);
            let baseline = s.baselines.entry(op).or_insert(sample);
            let ratio = sample / *baseline;
            // A spike moves the baseline no more than an answer twice as
            // slow as it.
            let toward = sample.min(2.0 * *baseline);
            let rate = if sample < *baseline {
                BASELINE_DOWN
            } else {
                BASELINE_UP
            };
            *baseline += (toward - *baseline) * rate;
            s.window.push(ratio);
            let mut adjusted = None;
            if s.window.len() >= before.max(MIN_WINDOW) {
                let median = median(&mut s.window);
                s.window.clear();
                if median > LATENCY_TOLERANCE {
                    s.slow_start = false;
                    let factor = (LATENCY_TOLERANCE / median).max(0.5);
                    s.limit = (s.limit * factor).max(1.0);
                    s.decreases.1 += 1;
                    adjusted = Some(Adjusted::LoweredOnLatency(
                        whole(s.limit),
                        (median * 10.0).round() as u32,
                    ));
                }
            }
            match adjusted {
                Some(a) => a,
                None => {
                    // The slot of this answer is still counted.
                    if 2 * s.in_flight >= before {
                        let step = if s.slow_start { 1.0 } else { 1.0 / s.limit };
                        s.limit = (s.limit + step).min(self.max as f64);
                    }
                    let after = whole(s.limit);
                    if after > before {
                        Adjusted::Raised(after)
                    } else {
                        Adjusted::Kept(after)
                    }
                }
            }
        };
        if matches!(adjusted, Adjusted::Raised(_)) {
            self.notify.notify_waiters();
        }
        adjusted
    }

    /// Records a 429 to the request of `permit`: halves the limit once per
    /// congestion event, never below the start.
    pub fn throttled(&self, permit: &Permit<'_>) -> Adjusted {
        let mut s = self.lock();
        if !self.adaptive {
            return Adjusted::Kept(self.max);
        }
        s.slow_start = false;
        if permit.seq < s.recovery {
            return Adjusted::Kept(whole(s.limit));
        }
        s.recovery = s.sent;
        s.limit = (s.limit / 2.0).max(self.floor as f64);
        s.decreases.0 += 1;
        Adjusted::LoweredOn429(whole(s.limit))
    }

    /// The current limit (whole requests).
    pub fn limit(&self) -> usize {
        whole(self.lock().limit)
    }

    /// How often the limit was lowered: on 429, on latency.
    pub fn decreases(&self) -> (u64, u64) {
        self.lock().decreases
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked: every update
        // is a plain assignment.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The limit in whole requests (at least 1).
fn whole(limit: f64) -> usize {
    (limit.floor() as usize).max(1)
}

/// The median of a non-empty window (reorders it).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const MS: Duration = Duration::from_millis(1);

    #[tokio::test]
    async fn caps_concurrency() {
        let t = Arc::new(Throttle::new(3, false));
        let now = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let (t, now, peak) = (t.clone(), now.clone(), peak.clone());
            tasks.push(tokio::spawn(async move {
                let _p = t.acquire().await;
                let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(n, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(2)).await;
                now.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 3);
    }

    /// Takes `n` slots at once (the limit must allow them), answers each
    /// after `latency`, and returns the last adjustment.
    async fn round(t: &Throttle, n: usize, latency: Duration) -> Adjusted {
        let mut permits = Vec::new();
        for _ in 0..n {
            permits.push(t.acquire().await);
        }
        let mut last = Adjusted::Kept(t.limit());
        for _p in &permits {
            last = t.answered("get", latency);
        }
        last
    }

    #[tokio::test]
    async fn slow_start_doubles_each_round_up_to_the_ceiling() {
        let t = Throttle::new(64, true);
        assert_eq!(t.limit(), INITIAL_LIMIT);
        let mut seen = Vec::new();
        for _ in 0..4 {
            round(&t, t.limit(), 50 * MS).await;
            seen.push(t.limit());
        }
        assert_eq!(seen, [16, 32, 64, 64]);
        assert_eq!(Throttle::new(3, true).limit(), 3, "never above the ceiling");
        assert_eq!(Throttle::new(64, false).limit(), 64, "fixed");
    }

    #[tokio::test]
    async fn an_unused_limit_does_not_grow() {
        let t = Throttle::new(64, true);
        for _ in 0..100 {
            round(&t, 1, 50 * MS).await;
        }
        assert_eq!(t.limit(), INITIAL_LIMIT);
    }

    #[tokio::test]
    async fn a_429_halves_once_per_event_never_below_the_start() {
        let t = Throttle::new(64, true);
        for _ in 0..3 {
            round(&t, t.limit(), 50 * MS).await;
        }
        assert_eq!(t.limit(), 64);
        // Three requests in flight at once all get a 429: one event.
        let a = t.acquire().await;
        let b = t.acquire().await;
        let c = t.acquire().await;
        assert_eq!(t.throttled(&a), Adjusted::LoweredOn429(32));
        assert_eq!(t.throttled(&b), Adjusted::Kept(32));
        assert_eq!(t.throttled(&c), Adjusted::Kept(32));
        drop((a, b, c));
        // A request sent after the decrease starts a new event.
        let d = t.acquire().await;
        assert_eq!(t.throttled(&d), Adjusted::LoweredOn429(16));
        drop(d);
        for _ in 0..5 {
            let e = t.acquire().await;
            t.throttled(&e);
        }
        assert_eq!(t.limit(), INITIAL_LIMIT);
        // Out of slow start: about +1 per round of a fully used limit.
        round(&t, 8, 50 * MS).await;
        assert_eq!(t.limit(), 8);
        round(&t, 8, 50 * MS).await;
        assert_eq!(t.limit(), 9);
        let fixed = Throttle::new(16, false);
        let p = fixed.acquire().await;
        assert_eq!(fixed.throttled(&p), Adjusted::Kept(16));
    }

    #[tokio::test]
    async fn rising_latency_lowers_the_limit_and_flat_latency_grows_it_back() {
        let t = Throttle::new(64, true);
        for _ in 0..3 {
            round(&t, t.limit(), 50 * MS).await;
        }
        assert_eq!(t.limit(), 64);
        // Latency x4: lowered within two windows, at most halved at once.
        let mut answers = 0;
        while t.limit() == 64 {
            assert!(answers < 128, "not lowered within two windows");
            round(&t, 1, 200 * MS).await;
            answers += 1;
        }
        let once = t.limit();
        assert!((32..=48).contains(&once), "{once}");
        // And again: lower still, in windows as long as the lower limit.
        round(&t, once, 200 * MS).await;
        round(&t, t.limit(), 200 * MS).await;
        let low = t.limit();
        assert!((1..once).contains(&low), "{once} -> {low}");
        assert!(t.decreases().1 >= 2);
        // Back to the baseline: additive growth (no more slow start), no
        // further decrease.
        let lowered = t.decreases();
        for _ in 0..4 {
            round(&t, t.limit(), 50 * MS).await;
        }
        assert!(
            (low + 2..=low + 4).contains(&t.limit()),
            "{low} -> {}",
            t.limit()
        );
        assert_eq!(t.decreases(), lowered);
    }

    #[tokio::test]
    async fn a_few_slow_answers_do_not_move_the_median() {
        let t = Throttle::new(64, true);
        for _ in 0..3 {
            round(&t, t.limit(), 50 * MS).await;
        }
        let permits: Vec<_> = futures::future::join_all((0..64).map(|_| t.acquire())).await;
        for (i, _p) in permits.iter().enumerate() {
            // A quarter of the window is a 30 s spike.
            let latency = if i % 4 == 0 { 30_000 * MS } else { 50 * MS };
            assert!(!matches!(
                t.answered("get", latency),
                Adjusted::LoweredOnLatency(..)
            ));
        }
        assert_eq!(t.limit(), 64);
    }

    #[tokio::test]
    async fn baselines_are_per_operation() {
        // A listing that always takes 400 ms and a read that takes 50 ms are
        // both at their baseline.
        let t = Throttle::new(64, true);
        for _ in 0..4 {
            let n = t.limit();
            let permits: Vec<_> = futures::future::join_all((0..n).map(|_| t.acquire())).await;
            for (i, _p) in permits.iter().enumerate() {
                let (op, latency) = if i % 2 == 0 {
                    ("list", 400 * MS)
                } else {
                    ("get", 50 * MS)
                };
                t.answered(op, latency);
            }
        }
        assert_eq!(t.limit(), 64);
        assert_eq!(t.decreases(), (0, 0));
    }
}

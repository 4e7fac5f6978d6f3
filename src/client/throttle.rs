//! The client's one shared throttle: every request of a [`super::Client`] (and
//! of its clones) passes through it, so the client backs off as a whole, not
//! each task alone.
//!
//! - A "not before" instant: a 429 with `Retry-After` pauses every request of
//!   the client until then, not only the one that got it.
//! - An in-flight limit: at most `limit` requests at once. With adaptive
//!   concurrency (AIMD), a 429 halves the limit (once per pause, not once per
//!   concurrent 429) and each success raises it by `1/limit` (about +1 per
//!   window of successes), never above the configured maximum.

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// The shortest span of one congestion event.
const MIN_EVENT: Duration = Duration::from_millis(500);

/// The shared throttle.
#[derive(Debug)]
pub struct Throttle {
    state: Mutex<State>,
    notify: Notify,
    max: usize,
    adaptive: bool,
}

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    not_before: Option<Instant>,
    /// The end of the pause that last halved the limit: 429s answering
    /// requests sent before it are the same congestion event.
    last_decrease_until: Option<Instant>,
}

/// A slot of the in-flight limit; released on drop.
#[derive(Debug)]
pub struct Permit<'a> {
    throttle: &'a Throttle,
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

impl Throttle {
    /// A throttle allowing `max` requests in flight (at least 1).
    pub fn new(max: usize, adaptive: bool) -> Self {
        let max = max.max(1);
        Throttle {
            state: Mutex::new(State {
                limit: max as f64,
                in_flight: 0,
                not_before: None,
                last_decrease_until: None,
            }),
            notify: Notify::new(),
            max,
            adaptive,
        }
    }

    /// Waits for the shared pause to end and for a slot under the limit.
    pub async fn acquire(&self) -> Permit<'_> {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let pause = {
                let mut s = self.lock();
                let now = Instant::now();
                match s.not_before {
                    Some(t) if t > now => Some(t),
                    _ => {
                        if (s.in_flight as f64) < s.limit.floor().max(1.0) {
                            s.in_flight += 1;
                            return Permit { throttle: self };
                        }
                        None
                    }
                }
            };
            match pause {
                Some(until) => {
                    // Wake early if the pause is extended or a slot frees:
                    // the loop re-reads the state either way.
                    tokio::select! {
                        () = tokio::time::sleep_until(until) => {}
                        () = &mut notified => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Pauses the whole client for `wait` from now (never shortens a pause),
    /// and with adaptive concurrency halves the in-flight limit once for this
    /// congestion event.
    pub fn pause(&self, wait: Duration) {
        let until = Instant::now() + wait;
        {
            let mut s = self.lock();
            s.not_before = Some(s.not_before.map_or(until, |t| t.max(until)));
            if self.adaptive {
                let now = Instant::now();
                let same_event = s.last_decrease_until.is_some_and(|t| now < t);
                if !same_event {
                    s.limit = (s.limit / 2.0).max(1.0);
                    // A zero Retry-After still makes one event of the 429s
                    // already in flight.
                    s.last_decrease_until = Some(until.max(now + MIN_EVENT));
                }
            }
        }
        self.notify.notify_waiters();
    }

    /// Records a success: with adaptive concurrency, raises the limit by
    /// `1/limit`, up to the maximum.
    pub fn success(&self) {
        if !self.adaptive {
            return;
        }
        let grew = {
            let mut s = self.lock();
            let before = s.limit.floor();
            s.limit = (s.limit + 1.0 / s.limit).min(self.max as f64);
            s.limit.floor() > before
        };
        if grew {
            self.notify.notify_waiters();
        }
    }

    /// The current in-flight limit (whole requests).
    pub fn limit(&self) -> usize {
        self.lock().limit.floor() as usize
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked: every update
        // is a single assignment.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

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

    #[tokio::test]
    async fn pause_holds_every_request() {
        // A lower bound only: a sleep never ends early, so this cannot flake.
        let t = Throttle::new(4, false);
        let start = Instant::now();
        t.pause(Duration::from_millis(150));
        let _p = t.acquire().await;
        assert!(Instant::now() - start >= Duration::from_millis(150));
    }

    #[test]
    fn aimd_halves_once_per_event_and_grows_back() {
        let t = Throttle::new(16, true);
        t.pause(Duration::from_secs(1));
        t.pause(Duration::from_secs(1)); // same congestion event
        assert_eq!(t.limit(), 8);
        for _ in 0..200 {
            t.success();
        }
        assert_eq!(t.limit(), 16);
        let fixed = Throttle::new(16, false);
        fixed.pause(Duration::ZERO);
        assert_eq!(fixed.limit(), 16);
    }
}

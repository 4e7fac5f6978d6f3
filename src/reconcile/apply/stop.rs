//! Stopping an apply part-way: once asked (the first SIGINT or SIGTERM), no
//! new change is started, and the changes in flight get a grace period (the
//! request timeout) to finish, after which they are abandoned and reported
//! as such. The signals themselves are watched by `commands::apply`; this is
//! only the flag and the clock, so the engine can be tested without signals.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// Asks a running apply to stop. Cheap to check; waited on without polling.
#[derive(Debug)]
pub struct Stop {
    requested: watch::Sender<bool>,
    /// Why it was asked to stop (e.g. `SIGINT`), and when.
    cause: OnceLock<(String, Instant)>,
    grace: Duration,
}

impl Stop {
    /// A stop not yet asked for; changes in flight when it is get `grace`
    /// to finish.
    pub fn new(grace: Duration) -> Self {
        Stop {
            requested: watch::Sender::new(false),
            cause: OnceLock::new(),
            grace,
        }
    }

    /// Asks the apply to stop because of `cause` (the first call counts).
    pub fn request(&self, cause: &str) {
        let _ = self.cause.set((cause.to_owned(), Instant::now()));
        self.requested.send_replace(true);
    }

    /// Whether a stop was asked for.
    pub fn is_requested(&self) -> bool {
        *self.requested.borrow()
    }

    /// Why the apply was asked to stop, once it was.
    pub fn cause(&self) -> Option<&str> {
        self.cause.get().map(|(c, _)| c.as_str())
    }

    /// The grace period of changes in flight.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// Resolves once a stop is asked for (at once if it already was).
    pub async fn requested(&self) {
        let mut rx = self.requested.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = rx.wait_for(|stop| *stop).await;
    }

    /// Resolves when the grace period after a stop has run out.
    async fn grace_over(&self) {
        self.requested().await;
        let asked = self.cause.get().map_or_else(Instant::now, |(_, at)| *at);
        tokio::time::sleep_until(asked + self.grace).await;
    }

    /// Runs `work` to its end, unless a stop was asked for and its grace
    /// period ran out first (`None`: abandoned, outcome unknown).
    pub async fn bounded<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::select! {
            biased;
            out = work => Some(out),
            () = self.grace_over() => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_in_flight_gets_the_grace_period_and_no_more() {
        // Without a stop, work that never ends is never abandoned.
        let stop = Stop::new(Duration::ZERO);
        assert!(!stop.is_requested());
        let waiting = stop.bounded(std::future::pending::<()>());
        assert!(
            tokio::time::timeout(Duration::from_millis(50), waiting)
                .await
                .is_err()
        );
        stop.request("SIGINT");
        stop.request("SIGTERM");
        assert!(stop.is_requested());
        assert_eq!(stop.cause(), Some("SIGINT"));
        stop.requested().await;
        // Once asked, with no grace: abandoned; work that is done still counts.
        assert_eq!(stop.bounded(std::future::pending::<()>()).await, None);
        assert_eq!(stop.bounded(async { 7 }).await, Some(7));
        // With a long grace, work in flight finishes.
        let patient = Stop::new(Duration::from_secs(3600));
        patient.request("SIGTERM");
        let work = async {
            tokio::task::yield_now().await;
            "done"
        };
        assert_eq!(patient.bounded(work).await, Some("done"));
    }
}

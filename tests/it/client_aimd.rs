//! A measurement, not a pass/fail test (ignored by default; run with
//! `cargo test --test it client_aimd -- --ignored --nocapture`): the same burst
//! of reads against a token-bucket rate limiter, with and without adaptive
//! concurrency (AIMD), printing 429s, retries and wall time. It informed the
//! default (`adaptive_concurrency: true`); see the client's report.

#![allow(clippy::unwrap_used)] // test helpers: a failing unwrap is a failing test, with its location

use crate::client_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use client_support::{Reply, TestServer};
use evalctl::client::{Client, Credentials, RetryPolicy};

/// A token bucket: `rate` tokens per second, at most `burst` stored.
struct Bucket {
    tokens: f64,
    last: Instant,
    rate: f64,
    burst: f64,
}

impl Bucket {
    fn take(&mut self) -> Result<(), Duration> {
        let now = Instant::now();
        self.tokens = (self.tokens + (now - self.last).as_secs_f64() * self.rate).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / self.rate))
        }
    }
}

async fn run(adaptive: bool, requests: usize, in_flight: usize) -> (u64, u64, Duration) {
    let bucket = Arc::new(Mutex::new(Bucket {
        tokens: 10.0,
        last: Instant::now(),
        rate: 100.0,
        burst: 10.0,
    }));
    let server = TestServer::start(move |_| match bucket.lock().unwrap().take() {
        Ok(()) => Reply::status(404).after(Duration::from_millis(20)),
        Err(wait) => {
            // Retry-After in whole seconds, as HTTP says; at least 1.
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            Reply::status(429).header("retry-after", &secs.to_string())
        }
    });
    let mut config = server.config(Credentials::api_key("k"));
    config.concurrency = in_flight;
    config.adaptive_concurrency = adaptive;
    config.retry = RetryPolicy {
        max_attempts: 20,
        base_delay: Duration::from_millis(50),
        max_delay: Duration::from_secs(2),
        max_elapsed: Duration::from_secs(60),
    };
    let client = Client::new(config).unwrap();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..requests {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            client.get_user(&format!("u{i}")).await
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap(), None);
    }
    let stats = client.stats();
    (
        stats.total.rate_limited,
        stats.total.retries,
        start.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run with --ignored --nocapture"]
async fn measure_aimd_against_a_token_bucket() {
    for in_flight in [8, 32] {
        for adaptive in [false, true] {
            let (r429, retries, took) = run(adaptive, 300, in_flight).await;
            println!(
                "in_flight={in_flight:>2} adaptive={adaptive:<5} 429s={r429:>4} retries={retries:>4} wall={:.2}s",
                took.as_secs_f64()
            );
        }
    }
}

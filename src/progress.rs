//! A progress indicator on stderr for long loads and applies: shown only when
//! stderr is a terminal (and not with `-q`), silent otherwise, so CI logs and
//! pipes stay clean.
//!
//! It reports what the client has done (requests sent, retries, throttling),
//! read from the client's counters, and, for an apply, how many changes are
//! done: the work itself knows nothing about it. Lines printed while it shows
//! go through [`Progress::suspend`], so they land above it, never through it.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::client::Client;
use crate::output::Printer;

/// A running indicator; finishes (and clears itself) when dropped.
pub struct Progress {
    bar: Option<ProgressBar>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    /// Starts an indicator saying `what` (e.g. "Loading live state"), updated
    /// from `client`'s request counters; a no-op when stderr is not a terminal.
    pub fn start(printer: &Printer, client: &Client, what: &str) -> Progress {
        Self::with(printer, client, what, None)
    }

    /// Like [`Progress::start`], counting `total` steps (changes applied) as
    /// [`Progress::advance`] reports them: `what… 12/300, 40 requests`.
    pub fn counted(printer: &Printer, client: &Client, what: &str, total: usize) -> Progress {
        Self::with(printer, client, what, Some(total))
    }

    fn with(printer: &Printer, client: &Client, what: &str, total: Option<usize>) -> Progress {
        if printer.is_quiet() || !printer.stderr_is_terminal() {
            return Progress {
                bar: None,
                ticker: None,
            };
        }
        let (bar, template) = match total {
            Some(total) => (
                ProgressBar::new(u64::try_from(total).unwrap_or(u64::MAX)),
                "{spinner} {prefix}… {pos}/{len}, {msg} ({elapsed})",
            ),
            None => (
                ProgressBar::new_spinner(),
                "{spinner} {prefix}… {msg} ({elapsed})",
            ),
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(120));
        let base = client.stats().total.requests;
        let (client_for_task, bar_for_task) = (client.clone(), bar.clone());
        let ticker = tokio::spawn(async move {
            loop {
                let total = client_for_task.stats().total;
                let mut message = format!("{} requests", total.requests.saturating_sub(base));
                if total.retries > 0 {
                    message.push_str(&format!(", {} retried", total.retries));
                }
                if total.rate_limited > 0 {
                    message.push_str(&format!(", {} throttled", total.rate_limited));
                }
                bar_for_task.set_message(message);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        Progress {
            bar: Some(bar),
            ticker: Some(ticker),
        }
    }

    /// Counts one step done.
    pub fn advance(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Runs `print` with the indicator hidden, so what it prints stays above
    /// the indicator instead of being drawn over.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(ticker) = self.ticker.take() {
            ticker.abort();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

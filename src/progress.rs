//! A progress indicator on stderr for long loads and applies: shown only when
//! stderr is a terminal (and not with `-q`), silent otherwise, so CI logs and
//! pipes stay clean.
//!
//! It reports what the client has done (requests sent, retries, throttling),
//! read from the client's counters: the work itself knows nothing about it.

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
        if printer.is_quiet() || !printer.stderr_is_terminal() {
            return Progress {
                bar: None,
                ticker: None,
            };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        let base = client.stats().total.requests;
        let (what, client_for_task, bar_for_task) = (what.to_owned(), client.clone(), bar.clone());
        bar.set_message(format!("{what}…"));
        let ticker = tokio::spawn(async move {
            loop {
                let total = client_for_task.stats().total;
                let mut message =
                    format!("{what}… {} requests", total.requests.saturating_sub(base));
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

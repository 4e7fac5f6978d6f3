//! Logging to stderr with `tracing`, at the level `-v`/`-q` ask for.
//!
//! Secrets never reach a log line: the client logs methods, paths, statuses
//! and durations, never headers or bodies holding secrets; `Secret` values
//! print as `[redacted]` even if a `Debug` slips into a log; and every line is
//! written through [`crate::scrub::MaskingWriter`], so a secret evalctl holds
//! is `********` whichever module logged it, at every level (`EVALCTL_LOG`
//! included).

use tracing_subscriber::EnvFilter;

/// The environment variable that overrides `-v`/`-q` with `RUST_LOG`-style
/// filters, e.g. `EVALCTL_LOG=evalctl::client=debug` or
/// `EVALCTL_LOG=info,evalctl::sandbox=warn`.
pub const ENV_LOG: &str = "EVALCTL_LOG";

/// Installs the subscriber: `-q` errors only, default warnings, `-v` info
/// (each request: method, path, status, time), `-vv` debug (retries, waits,
/// the adaptive limit), `-vvv` trace (bodies, redacted); evalctl's own
/// modules, dependencies stay at warn. [`ENV_LOG`], when set, replaces all of
/// that; an invalid value is reported and ignored.
pub fn init(verbose: u8, quiet: bool, color: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "evalctl=info,warn",
        (false, 2) => "evalctl=debug,warn",
        (false, _) => "evalctl=trace,warn",
    };
    let from_env = std::env::var(ENV_LOG)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map(|v| EnvFilter::try_new(&v).map_err(|e| (v, e)));
    let (filter, invalid) = match from_env {
        Some(Ok(filter)) => (filter, None),
        Some(Err(bad)) => (EnvFilter::new(level), Some(bad)),
        None => (EnvFilter::new(level), None),
    };
    // A second init (tests calling run_cli twice) is harmless: keep the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| crate::scrub::MaskingWriter::new(std::io::stderr()))
        .with_ansi(color)
        .with_target(verbose >= 2)
        .try_init();
    if let Some((value, err)) = invalid {
        tracing::warn!("{ENV_LOG}={value:?} is not a log filter ({err}); using the -v/-q level");
    }
}

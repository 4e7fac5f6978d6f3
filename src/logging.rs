//! Logging to stderr with `tracing`, at the level `-v`/`-q` ask for.
//!
//! Secrets never reach a log line: the client logs methods, paths, statuses
//! and durations, never headers or bodies holding secrets; `Secret` values
//! print as `[redacted]` even if a `Debug` slips into a log.

use tracing_subscriber::EnvFilter;

/// Installs the subscriber: `-q` errors only, default warnings, `-v` info,
/// `-vv` debug, `-vvv` trace (evalctl's own modules; dependencies stay at warn
/// unless `EVALCTL_LOG` says otherwise, e.g. `EVALCTL_LOG=debug`).
pub fn init(verbose: u8, quiet: bool, color: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "evalctl=info,warn",
        (false, 2) => "evalctl=debug,warn",
        (false, _) => "evalctl=trace,warn",
    };
    let filter = EnvFilter::try_from_env("EVALCTL_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    // A second init (tests calling run_cli twice) is harmless: keep the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(verbose >= 2)
        .try_init();
}

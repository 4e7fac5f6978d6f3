//! The flags of `evalctl sandbox` and the [`ServeOptions`] they ask for.

use std::path::PathBuf;

use crate::sandbox::serve::ServeOptions;
use crate::sandbox::server::DEFAULT_API_KEY_HEADER;

/// Arguments of `evalctl sandbox`.
#[derive(Debug, Clone, clap::Args)]
pub struct SandboxArgs {
    /// Address to listen on. Keep it on loopback: the demo credentials are public.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: String,

    /// Persist every change to FILE, a SQLite database (loaded at start when it
    /// exists, else created from the fixture; a state file of an earlier version is
    /// migrated, the old file kept as FILE.pre-sqlite). Holds no secret (credentials and
    /// integration tokens, API keys, headers: salted fingerprints only); those
    /// fingerprints and the other fields of an integration, which reads return (default
    /// headers, header mappings, init kwargs), are sealed under a key in FILE.key. Both are
    /// readable by their owner only (mode 0600).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,

    /// Checkpoint the state file's write-ahead log into it when the log
    /// passes BYTES (default: SQLite's, 1,000 pages); for tests of checkpoints.
    #[arg(long, value_name = "BYTES", hide = true)]
    pub checkpoint_after_bytes: Option<u64>,

    /// Start from this fixture (JSON, as printed by --dump-fixture) instead
    /// of the built-in demo fixture.
    #[arg(long, value_name = "FILE")]
    pub fixture: Option<PathBuf>,

    /// Print the built-in demo fixture as JSON and exit.
    #[arg(long)]
    pub dump_fixture: bool,

    /// Header carrying API keys (for parity with the client's override).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_API_KEY_HEADER)]
    pub api_key_header: String,

    /// Close a connection whose request head has not fully arrived this many
    /// milliseconds after its first byte (after the connection opened, for
    /// its first request).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 10_000,
        help_heading = "Connections"
    )]
    pub header_read_timeout_ms: u64,

    /// Close a kept-alive connection idle this many milliseconds between two
    /// requests (longer than HTTP clients keep idle connections for reuse).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 120_000,
        help_heading = "Connections"
    )]
    pub idle_timeout_ms: u64,

    /// Serve at most N connections at once; more are answered 503 with
    /// Retry-After [default: three quarters of the open-file limit less 128,
    /// at most 1024]
    #[arg(long, value_name = "N", help_heading = "Connections")]
    pub max_connections: Option<usize>,

    /// Serve at most N connections at once from one IP address; more from it
    /// are answered 503 with Retry-After, so one client holding idle or slow
    /// sockets cannot take every slot from the others [default: half of
    /// --max-connections]
    #[arg(long, value_name = "N", help_heading = "Connections")]
    pub max_connections_per_peer: Option<usize>,

    /// Refuse HTTP Basic on every trends operation, not only on the spec's three (as some
    /// deployments do)
    #[arg(long)]
    pub refuse_basic_on_trends: bool,

    /// Fault: latency added to every request, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0, help_heading = "Faults")]
    pub latency_ms: u64,

    /// Fault: up to this much random extra latency, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0, help_heading = "Faults")]
    pub jitter_ms: u64,

    /// Fault: fraction of requests delayed by --spike-ms more.
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 0.0,
        help_heading = "Faults"
    )]
    pub spike_rate: f64,

    /// Fault: the delay of a latency spike, in milliseconds.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 30_000,
        help_heading = "Faults"
    )]
    pub spike_ms: u64,

    /// Fault: fraction of requests answered 500/502/503/504 without processing.
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 0.0,
        help_heading = "Faults"
    )]
    pub fail_rate: f64,

    /// Fault: fraction of requests processed, then answered 500/502/503/504.
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 0.0,
        help_heading = "Faults"
    )]
    pub fail_after_rate: f64,

    /// Fault: fraction of requests answered 429 with Retry-After.
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 0.0,
        help_heading = "Faults"
    )]
    pub throttle_rate: f64,

    /// Fault: the Retry-After of injected 429s, in seconds.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 1,
        help_heading = "Faults"
    )]
    pub retry_after: u64,

    /// Fault: allow at most N requests per second (token bucket); more get 429.
    #[arg(long, value_name = "N", help_heading = "Faults")]
    pub rate_limit: Option<f64>,

    /// Fault: fraction of connections closed without a response (not processed).
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 0.0,
        help_heading = "Faults"
    )]
    pub drop_rate: f64,

    /// Fault: fraction of requests processed, then closed without a response.
    #[arg(
        long,
        value_name = "RATE",
        default_value_t = 0.0,
        help_heading = "Faults"
    )]
    pub drop_after_rate: f64,

    /// Fault: only requests whose path contains this are subject to faults
    /// (ending in `$`: whose path ends with the rest, as `/v2/scorers$`).
    #[arg(long, value_name = "TEXT", help_heading = "Faults")]
    pub fault_path: Option<String>,

    /// Seed of the fault decisions (same seed, same faults per request number).
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = "Faults")]
    pub seed: u64,
}

impl From<SandboxArgs> for ServeOptions {
    fn from(args: SandboxArgs) -> Self {
        let SandboxArgs {
            listen,
            state,
            checkpoint_after_bytes,
            fixture,
            dump_fixture,
            api_key_header,
            header_read_timeout_ms,
            idle_timeout_ms,
            max_connections,
            max_connections_per_peer,
            refuse_basic_on_trends,
            latency_ms,
            jitter_ms,
            spike_rate,
            spike_ms,
            fail_rate,
            fail_after_rate,
            throttle_rate,
            retry_after,
            rate_limit,
            drop_rate,
            drop_after_rate,
            fault_path,
            seed,
        } = args;
        ServeOptions {
            listen,
            state,
            checkpoint_after_bytes,
            fixture,
            dump_fixture,
            api_key_header,
            header_read_timeout_ms,
            idle_timeout_ms,
            max_connections,
            max_connections_per_peer,
            refuse_basic_on_trends,
            latency_ms,
            jitter_ms,
            spike_rate,
            spike_ms,
            fail_rate,
            fail_after_rate,
            throttle_rate,
            retry_after,
            rate_limit,
            drop_rate,
            drop_after_rate,
            fault_path,
            seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SandboxArgs,
    }

    #[test]
    fn no_flags_ask_for_the_default_options_and_flags_reach_them() {
        <Cli as clap::CommandFactory>::command().debug_assert();
        let cli = Cli::parse_from(["sandbox"]);
        assert_eq!(ServeOptions::from(cli.args), ServeOptions::default());
        let cli = Cli::parse_from(["sandbox", "--fail-rate", "0.3", "--seed", "7"]);
        let options = ServeOptions::from(cli.args);
        assert_eq!((options.fail_rate, options.seed), (0.3, 7));
    }
}

//! `evalctl sandbox`: [`run`] serves as [`ServeOptions`] say until Ctrl-C
//! (the command line's flags are `crate::cli::sandbox`).
//!
//! With no arguments it serves the default fixture on 127.0.0.1:8080 and
//! prints how to point evalctl at it, with the fixture's public demo
//! credentials.

use std::future::Future;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use super::auth::user_by_api_key;
use super::error::SandboxError;
use super::faults::Faults;
use super::fixture::{DEMO_API_KEY, DEMO_EMAIL, DEMO_PASSWORD, Fixture};
use super::server::{DEFAULT_API_KEY_HEADER, Sandbox};

/// How `evalctl sandbox` serves: what the command line asks for
/// (`crate::cli::sandbox::SandboxArgs`), as plain data; the default is what
/// `evalctl sandbox` with no arguments does.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeOptions {
    /// Address to listen on. Keep it on loopback: the demo credentials are public.
    pub listen: String,

    /// Persist every change to FILE, a SQLite database (loaded at start when it
    /// exists, else created from the fixture; a state file of an earlier version is
    /// migrated, the old file kept as FILE.pre-sqlite). Holds no secret (credentials and
    /// integration tokens, API keys, headers: salted fingerprints only); those
    /// fingerprints and the other fields of an integration, which reads return (default
    /// headers, header mappings, init kwargs), are sealed under a key in FILE.key. Both are
    /// readable by their owner only (mode 0600).
    pub state: Option<PathBuf>,

    /// Checkpoint the state file's write-ahead log into it when the log
    /// passes BYTES (default: SQLite's, 1,000 pages); for tests of checkpoints.
    pub checkpoint_after_bytes: Option<u64>,

    /// Start from this fixture (JSON, as printed by --dump-fixture) instead
    /// of the built-in demo fixture.
    pub fixture: Option<PathBuf>,

    /// Print the built-in demo fixture as JSON and exit.
    pub dump_fixture: bool,

    /// Header carrying API keys (for parity with the client's override).
    pub api_key_header: String,

    /// Close a connection whose request head has not fully arrived this many
    /// milliseconds after its first byte (after the connection opened, for
    /// its first request).
    pub header_read_timeout_ms: u64,

    /// Close a kept-alive connection idle this many milliseconds between two
    /// requests (longer than HTTP clients keep idle connections for reuse).
    pub idle_timeout_ms: u64,

    /// Serve at most N connections at once; more are answered 503 with
    /// Retry-After [default: three quarters of the open-file limit less 128,
    /// at most 1024]
    pub max_connections: Option<usize>,

    /// Serve at most N connections at once from one IP address; more from it
    /// are answered 503 with Retry-After, so one client holding idle or slow
    /// sockets cannot take every slot from the others [default: half of
    /// --max-connections]
    pub max_connections_per_peer: Option<usize>,

    /// Refuse HTTP Basic on every trends operation, not only on the spec's three (as some
    /// deployments do)
    pub refuse_basic_on_trends: bool,

    /// Fault: latency added to every request, in milliseconds.
    pub latency_ms: u64,

    /// Fault: up to this much random extra latency, in milliseconds.
    pub jitter_ms: u64,

    /// Fault: fraction of requests delayed by --spike-ms more.
    pub spike_rate: f64,

    /// Fault: the delay of a latency spike, in milliseconds.
    pub spike_ms: u64,

    /// Fault: fraction of requests answered 500/502/503/504 without processing.
    pub fail_rate: f64,

    /// Fault: fraction of requests processed, then answered 500/502/503/504.
    pub fail_after_rate: f64,

    /// Fault: fraction of requests answered 429 with Retry-After.
    pub throttle_rate: f64,

    /// Fault: the Retry-After of injected 429s, in seconds.
    pub retry_after: u64,

    /// Fault: allow at most N requests per second (token bucket); more get 429.
    pub rate_limit: Option<f64>,

    /// Fault: fraction of connections closed without a response (not processed).
    pub drop_rate: f64,

    /// Fault: fraction of requests processed, then closed without a response.
    pub drop_after_rate: f64,

    /// Fault: only requests whose path contains this are subject to faults.
    pub fault_path: Option<String>,

    /// Seed of the fault decisions (same seed, same faults per request number).
    pub seed: u64,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: "127.0.0.1:8080".to_owned(),
            state: None,
            checkpoint_after_bytes: None,
            fixture: None,
            dump_fixture: false,
            api_key_header: DEFAULT_API_KEY_HEADER.to_owned(),
            header_read_timeout_ms: 10_000,
            idle_timeout_ms: 120_000,
            max_connections: None,
            max_connections_per_peer: None,
            refuse_basic_on_trends: false,
            latency_ms: 0,
            jitter_ms: 0,
            spike_rate: 0.0,
            spike_ms: 30_000,
            fail_rate: 0.0,
            fail_after_rate: 0.0,
            throttle_rate: 0.0,
            retry_after: 1,
            rate_limit: None,
            drop_rate: 0.0,
            drop_after_rate: 0.0,
            fault_path: None,
            seed: 0,
        }
    }
}

impl ServeOptions {
    /// The faults these arguments ask for.
    pub fn faults(&self) -> Result<Faults, SandboxError> {
        let faults = Faults {
            latency: Duration::from_millis(self.latency_ms),
            jitter: Duration::from_millis(self.jitter_ms),
            spike_rate: self.spike_rate,
            spike: Duration::from_millis(self.spike_ms),
            fail_rate: self.fail_rate,
            fail_after_rate: self.fail_after_rate,
            throttle_rate: self.throttle_rate,
            retry_after_secs: self.retry_after,
            rate_limit: self.rate_limit,
            drop_rate: self.drop_rate,
            drop_after_rate: self.drop_after_rate,
            seed: self.seed,
            path_contains: self.fault_path.clone(),
            ..Faults::default()
        };
        faults.validate()?;
        Ok(faults)
    }
}

/// Reads `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`).
fn listen_addr(listen: &str) -> Result<SocketAddr, SandboxError> {
    if let Ok(addr) = listen.parse() {
        return Ok(addr);
    }
    listen
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| SandboxError::BadAddress {
            addr: listen.to_owned(),
        })
}

/// Runs `evalctl sandbox` until Ctrl-C or, on Unix, SIGTERM (what `docker
/// stop` and service managers send): either stops it gracefully, the state
/// file checkpointed and closed.
pub async fn run(args: ServeOptions) -> Result<(), SandboxError> {
    let mut stdout = std::io::stdout();
    run_with(args, &mut stdout, stop_signal()?).await
}

/// A future that completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM. The
/// handlers are installed here, before the sandbox says it is listening:
/// a signal sent as soon as it has said so stops it gracefully (a lazily
/// installed handler would leave that signal's default action, death).
#[cfg(unix)]
fn stop_signal() -> Result<impl Future<Output = ()> + Send + 'static, SandboxError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).map_err(SandboxError::Signal)?;
    let mut terminate = signal(SignalKind::terminate()).map_err(SandboxError::Signal)?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// A future that completes on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> Result<impl Future<Output = ()> + Send + 'static, SandboxError> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// [`run`] writing to `out` and stopping when `shutdown` completes.
pub async fn run_with<W: Write>(
    args: ServeOptions,
    out: &mut W,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), SandboxError> {
    if args.dump_fixture {
        let text = Fixture::demo().to_json_pretty()?;
        // A closed pipe (`--dump-fixture | head`) is not an error.
        let _ = writeln!(out, "{text}");
        return Ok(());
    }
    let addr = listen_addr(&args.listen)?;
    let fixture = match &args.fixture {
        Some(path) => Fixture::load(path)?,
        None => Fixture::demo(),
    };
    let mut builder = Sandbox::builder()
        .fixture(fixture)
        .faults(args.faults()?)
        .refuse_basic_on_trends(args.refuse_basic_on_trends)
        .api_key_header(&args.api_key_header)
        .listen(addr)
        .header_read_timeout(Duration::from_millis(args.header_read_timeout_ms))
        .idle_timeout(Duration::from_millis(args.idle_timeout_ms));
    if let Some(max) = args.max_connections {
        builder = builder.max_connections(max);
    }
    if let Some(max) = args.max_connections_per_peer {
        builder = builder.max_connections_per_peer(max);
    }
    if let Some(state) = &args.state {
        builder = builder.state_file(state);
    }
    if let Some(bytes) = args.checkpoint_after_bytes {
        builder = builder.checkpoint_after_bytes(bytes);
    }
    let bound = builder.bind().await?;
    let base_url = format!("http://{}", bound.local_addr());
    let demo_works = bound.read_state(|s| user_by_api_key(s, DEMO_API_KEY).is_some());
    let _ = writeln!(out, "evalctl sandbox listening on {base_url}");
    if !bound.local_addr().ip().is_loopback() {
        let _ = writeln!(
            out,
            "warning: listening beyond loopback; anyone who can reach {base_url} can use the demo credentials"
        );
    }
    if demo_works {
        let _ = writeln!(
            out,
            "demo credentials (public demo values): API key {DEMO_API_KEY}; user {DEMO_EMAIL} / {DEMO_PASSWORD}"
        );
        let _ = writeln!(out, "point evalctl at it:");
        let _ = writeln!(out, "  export EVALCTL_BASE_URL={base_url}");
        let _ = writeln!(out, "  export EVALCTL_API_KEY={DEMO_API_KEY}");
    } else {
        let _ = writeln!(
            out,
            "point evalctl at it: export EVALCTL_BASE_URL={base_url}"
        );
    }
    if let Some(state) = &args.state {
        let _ = writeln!(out, "state file: {}", state.display());
    }
    let _ = writeln!(out, "press Ctrl-C to stop");
    let _ = out.flush();
    bound.serve(shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_loopback_and_fault_free() {
        let options = ServeOptions::default();
        assert_eq!(options.listen, "127.0.0.1:8080");
        assert!(!options.faults().unwrap().is_active());
        let faulty = ServeOptions {
            fail_rate: 0.3,
            seed: 7,
            ..ServeOptions::default()
        };
        let f = faulty.faults().unwrap();
        assert!(f.is_active() && f.seed == 7);
        let wrong = ServeOptions {
            fail_rate: 3.0,
            ..ServeOptions::default()
        };
        assert!(wrong.faults().is_err());
        assert!(listen_addr("localhost:0").unwrap().ip().is_loopback());
        assert!(listen_addr("[::1]:0").is_ok());
        assert!(listen_addr("nonsense").is_err());
    }

    #[tokio::test]
    async fn dump_fixture_prints_json_without_secrets() {
        let options = ServeOptions {
            dump_fixture: true,
            ..ServeOptions::default()
        };
        let mut out = Vec::new();
        run_with(options, &mut out, async {}).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v["projects"].is_array());
        assert!(!text.contains(DEMO_PASSWORD) && !text.contains(DEMO_API_KEY));
    }

    #[tokio::test]
    async fn serves_and_prints_how_to_connect() {
        let options = ServeOptions {
            listen: "127.0.0.1:0".to_owned(),
            ..ServeOptions::default()
        };
        let mut out = Vec::new();
        run_with(options, &mut out, async {}).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("EVALCTL_API_KEY=demo-api-key"), "{text}");
        assert!(
            text.contains("EVALCTL_BASE_URL=http://127.0.0.1:"),
            "{text}"
        );
    }
}

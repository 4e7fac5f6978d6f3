//! The cost of a sandbox write with `--state FILE`, at two sizes of state
//! (`cargo run --release --example bench_state -- --help`).
//!
//! For each state (the demo fixture, small, and the benchmark's scaled
//! fixture, `--projects` × `--log-streams`, large; the sizes measured are in
//! docs/sandbox.md, next to the figures) it starts an in-process sandbox
//! with a state file in a temporary directory and sends `--writes` metric
//! settings changes one after another (each a different value, so each is a
//! real change), while a second client reads a log stream's settings in a
//! loop. It prints the latency of the writes (median, p95, max, total) and
//! of the reads made meanwhile, then the same without a state file, and the
//! size of the state file before and after. Then it times `--changes`
//! changes sent by `--concurrency` clients at once (as an apply sends
//! them), with and without a state file. Figures are printed, never
//! asserted.

// A benchmark's job is to print its figures.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use evalctl::sandbox::{Faults, Fixture, Sandbox, SandboxHandle};

/// Command-line flags.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "bench_state",
    about = "Cost of a sandbox write with a state file: on the demo fixture, and on a large state of --projects × --log-streams",
    after_help = "Run it as: cargo run --release --example bench_state -- [flags]"
)]
struct Args {
    /// Writes per measurement.
    #[arg(long, default_value_t = 200)]
    writes: usize,
    /// Projects of the large state (its state file grows with projects × log
    /// streams; the run docs/sandbox.md reports used 185).
    #[arg(long, default_value_t = 50)]
    projects: usize,
    /// Log streams per project of the large state.
    #[arg(long, default_value_t = 40)]
    log_streams: usize,
    /// Also measure the writes with checkpoints this frequent (the size of
    /// the write-ahead log that triggers one; default: SQLite's, 1,000 pages).
    #[arg(long, value_name = "BYTES")]
    checkpoint_after_bytes: Option<u64>,
    /// Changes sent at once by `--concurrency` clients (as an apply does),
    /// timed with and without a state file.
    #[arg(long, default_value_t = 4000)]
    changes: usize,
    /// Clients sending those changes (evalctl's default concurrency).
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Latency the sandbox adds to every request during the concurrent
    /// changes, in milliseconds (the service's round trip).
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Where the state files go (default: a temporary directory).
    #[arg(long, value_name = "DIR")]
    dir: Option<std::path::PathBuf>,
}

/// Latencies of one kind of request.
#[derive(Debug, Default)]
struct Latencies(Vec<Duration>);

impl Latencies {
    fn summary(&mut self) -> String {
        if self.0.is_empty() {
            return "none".to_owned();
        }
        self.0.sort();
        let n = self.0.len();
        let at = |q: f64| self.0[((n as f64 - 1.0) * q).round() as usize];
        let total: Duration = self.0.iter().sum();
        format!(
            "n {n:>5}  median {:>8}  p95 {:>8}  max {:>8}  mean {:>8}  total {:>8}",
            ms(at(0.5)),
            ms(at(0.95)),
            ms(at(1.0)),
            ms(total / n as u32),
            ms(total),
        )
    }
}

fn ms(d: Duration) -> String {
    let v = d.as_secs_f64() * 1000.0;
    if v >= 1000.0 {
        format!("{:.2} s", v / 1000.0)
    } else {
        format!("{v:.2} ms")
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

/// The state files in `dir` and their total size.
fn files_in(dir: &Path) -> (Vec<String>, u64) {
    let mut names = Vec::new();
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            names.push(e.file_name().to_string_lossy().into_owned());
            total += e.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    names.sort();
    (names, total)
}

/// Sends `writes` metric-settings changes one at a time while another task
/// reads; returns the write and read latencies.
async fn measure(handle: &SandboxHandle, writes: usize) -> (Latencies, Latencies) {
    let runs: Vec<(String, String)> = handle.read_state(|s| {
        s.log_streams
            .iter()
            .take(20)
            .map(|l| (l.project_id.clone(), l.id.clone()))
            .collect()
    });
    let http = reqwest::Client::new();
    let base = handle.base_url();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let http = http.clone();
        let (pid, lid) = runs[0].clone();
        let url = format!("{base}/v2/projects/{pid}/log_streams/{lid}/metric_settings");
        let stop = Arc::clone(&stop);
        tokio::spawn(async move {
            let mut reads = Latencies::default();
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                let r = http
                    .get(&url)
                    .header("Service-AO-API-Key", "demo-api-key")
                    .send()
                    .await;
                if let Ok(r) = r {
                    let _ = r.bytes().await;
                    reads.0.push(t.elapsed());
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            reads
        })
    };
    let mut latencies = Latencies::default();
    for i in 0..writes {
        let (pid, lid) = &runs[i % runs.len()];
        let rate = ((i % 97) + 1) as f64 / 100.0;
        let body = serde_json::json!({"segment_filters": [{"sample_rate": rate}]});
        let t = Instant::now();
        let r = http
            .patch(format!(
                "{base}/v2/projects/{pid}/log_streams/{lid}/metric_settings"
            ))
            .header("Service-AO-API-Key", "demo-api-key")
            .json(&body)
            .send()
            .await;
        match r {
            Ok(r) if r.status().is_success() => {
                let _ = r.bytes().await;
                latencies.0.push(t.elapsed());
            }
            Ok(r) => eprintln!("write {i}: {}", r.status()),
            Err(e) => eprintln!("write {i}: {e}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.await.unwrap_or_default();
    (latencies, reads)
}

async fn run_one(label: &str, fixture: &Fixture, args: &Args, root: &Path) -> Result<(), String> {
    let dir = root.join(label);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let state = dir.join("state.json");
    let started = Instant::now();
    let handle = Sandbox::builder()
        .fixture(fixture.clone())
        .state_file(&state)
        .start()
        .map_err(|e| e.to_string())?;
    let start_time = started.elapsed();
    let (_, before) = files_in(&dir);
    println!(
        "{label}: state file {} (first start, writing it: {})",
        mb(before),
        ms(start_time)
    );
    let (mut writes, mut reads) = measure(&handle, args.writes).await;
    println!("  writes with --state      {}", writes.summary());
    println!("  reads meanwhile          {}", reads.summary());
    handle.shutdown().map_err(|e| e.to_string())?;
    let (names, after) = files_in(&dir);
    println!("  files after: {} ({})", names.join(", "), mb(after));
    let started = Instant::now();
    let handle = Sandbox::builder()
        .fixture(fixture.clone())
        .state_file(&state)
        .start()
        .map_err(|e| e.to_string())?;
    println!("  restart (load): {}", ms(started.elapsed()));
    handle.shutdown().map_err(|e| e.to_string())?;

    if let Some(bytes) = args.checkpoint_after_bytes {
        let state = dir.join("checkpointing.json");
        let handle = Sandbox::builder()
            .fixture(fixture.clone())
            .state_file(&state)
            .checkpoint_after_bytes(bytes)
            .start()
            .map_err(|e| e.to_string())?;
        let (mut writes, mut reads) = measure(&handle, args.writes).await;
        println!(
            "  writes checkpointing after {bytes} bytes of log {}",
            writes.summary()
        );
        println!("  reads meanwhile          {}", reads.summary());
        handle.shutdown().map_err(|e| e.to_string())?;
    }

    let handle = Sandbox::builder()
        .fixture(fixture.clone())
        .start()
        .map_err(|e| e.to_string())?;
    let (mut writes, mut reads) = measure(&handle, args.writes).await;
    println!("  writes without --state   {}", writes.summary());
    println!("  reads meanwhile          {}", reads.summary());
    handle.shutdown().map_err(|e| e.to_string())?;

    let faults = Faults {
        latency: Duration::from_millis(args.latency_ms),
        ..Faults::default()
    };
    let mut walls = Vec::new();
    for with_state in [true, false] {
        let mut builder = Sandbox::builder()
            .fixture(fixture.clone())
            .faults(faults.clone());
        if with_state {
            builder = builder.state_file(dir.join("concurrent.json"));
        }
        let handle = builder.start().map_err(|e| e.to_string())?;
        let (wall, failed) = concurrent(&handle, args.changes, args.concurrency).await;
        handle.shutdown().map_err(|e| e.to_string())?;
        println!(
            "  {} changes by {} clients {} --state: {} ({failed} failed)",
            args.changes,
            args.concurrency,
            if with_state { "with" } else { "without" },
            ms(wall)
        );
        walls.push(wall);
    }
    if let [with, without] = walls[..] {
        println!(
            "  with / without: {:.2} (at {} ms of latency)",
            with.as_secs_f64() / without.as_secs_f64().max(f64::MIN_POSITIVE),
            args.latency_ms
        );
    }
    Ok(())
}

/// Sends `changes` metric-settings changes from `concurrency` clients at
/// once; returns the wall time and how many were not answered 200.
async fn concurrent(
    handle: &SandboxHandle,
    changes: usize,
    concurrency: usize,
) -> (Duration, usize) {
    let runs: Vec<(String, String)> = handle.read_state(|s| {
        s.log_streams
            .iter()
            .map(|l| (l.project_id.clone(), l.id.clone()))
            .collect()
    });
    let runs = Arc::new(runs);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let http = reqwest::Client::new();
    let base = handle.base_url();
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency.max(1))
        .map(|_| {
            let (runs, next, http, base) = (
                Arc::clone(&runs),
                Arc::clone(&next),
                http.clone(),
                base.clone(),
            );
            tokio::spawn(async move {
                let mut failed = 0;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= changes {
                        return failed;
                    }
                    let (pid, lid) = &runs[i % runs.len()];
                    let rate = ((i % 97) + 1) as f64 / 100.0;
                    let r = http
                        .patch(format!(
                            "{base}/v2/projects/{pid}/log_streams/{lid}/metric_settings"
                        ))
                        .header("Service-AO-API-Key", "demo-api-key")
                        .json(&serde_json::json!({"segment_filters": [{"sample_rate": rate}]}))
                        .send()
                        .await;
                    match r {
                        Ok(r) if r.status().is_success() => {
                            let _ = r.bytes().await;
                        }
                        _ => failed += 1,
                    }
                }
            })
        })
        .collect();
    let mut failed = 0;
    for t in tasks {
        failed += t.await.unwrap_or(0);
    }
    (started.elapsed(), failed)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let args = Args::parse();
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: a debug build measures the debug sandbox: use `cargo run --release --example bench_state`"
        );
    }
    let tmp;
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => match tempfile::tempdir() {
            Ok(t) => {
                tmp = t;
                tmp.path().to_owned()
            }
            Err(e) => {
                eprintln!("bench_state: a temporary directory: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let small = Fixture::demo();
    let large = Fixture::scaled(args.projects, args.log_streams, 5);
    for (label, fixture) in [("demo", &small), ("scaled", &large)] {
        if let Err(e) = run_one(label, fixture, &args, &root).await {
            eprintln!("bench_state: {label}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

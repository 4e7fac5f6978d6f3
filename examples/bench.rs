//! The benchmark of issue 5 (`cargo run --release --example bench -- --help`).
//!
//! Populates an in-process sandbox with P projects × L log streams (default
//! 50 × 40 = 2,000, plus experiments, sections and templates), injects a
//! per-request latency (default 20 ms), writes a config repo that asks for
//! real changes, and runs the release `evalctl` binary against it as a user
//! would, phase by phase: plan from scratch (at the default concurrency and
//! at concurrency 1), apply, plan when converged, drift after out-of-band
//! changes, `validate` of 2,000 files, and plan and apply against a sandbox
//! that limits the request rate (429 with `Retry-After`). For each phase it
//! prints wall time, requests by kind (from the sandbox's request log), peak
//! RSS of the evalctl process and the ratio of wall time to the lower bound
//! `depth × latency + requests × latency / concurrency`, with PASS/MISS next
//! to each target. It never fails on a missed target: figures are printed,
//! not asserted.
//!
//! `--client` runs the client's phases instead (`client`), and
//! `--hostile-server` the hostile-server phase (`hostile_server`: peak RSS
//! when the service answers with huge bodies at full concurrency and endless
//! pages, against the documented bound).
//!
//! Module map: `population` (fixture, manifests, drift), `measure` (running
//! evalctl, peak RSS, request log), `phases` (the phases and their lower
//! bounds), `report` (printing).

// A benchmark's job is to print its figures.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "bench/client.rs"]
mod client;
#[path = "bench/hostile_server.rs"]
mod hostile_server;
#[path = "bench/measure.rs"]
mod measure;
#[path = "bench/phases.rs"]
mod phases;
#[path = "bench/population.rs"]
mod population;
#[path = "bench/report.rs"]
mod report;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

/// Command-line flags of the benchmark.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "bench",
    about = "Benchmark evalctl against an in-process sandbox (issue 5)",
    after_help = "Run it as: cargo run --release --example bench -- [flags]"
)]
pub struct Args {
    /// Projects in the population.
    #[arg(long, default_value_t = 50)]
    pub projects: usize,
    /// Log streams per project.
    #[arg(long, default_value_t = 40)]
    pub log_streams: usize,
    /// Experiments per project.
    #[arg(long, default_value_t = 5)]
    pub experiments: usize,
    /// Latency the sandbox adds to every request, in milliseconds.
    #[arg(long, default_value_t = 20)]
    pub latency_ms: u64,
    /// evalctl's `--concurrency` (default: evalctl's own default).
    #[arg(long)]
    pub concurrency: Option<u16>,
    /// Request rate the throttled sandbox allows, per second.
    #[arg(long, default_value_t = 200.0)]
    pub rate_limit: f64,
    /// Projects in the throttled phase's population (of the same shape).
    #[arg(long, default_value_t = 10)]
    pub throttle_projects: usize,
    /// Manifest files `validate` is timed on.
    #[arg(long, default_value_t = 2000)]
    pub validate_files: usize,
    /// Repeat every phase this many times (fresh sandbox each time) and
    /// report medians.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Seed of every choice the population makes.
    #[arg(long, default_value_t = 5)]
    pub seed: u64,
    /// Skip the plan at concurrency 1 (the slowest phase).
    #[arg(long)]
    pub skip_serial: bool,
    /// Skip the throttled phase.
    #[arg(long)]
    pub skip_throttle: bool,
    /// The evalctl binary to measure (default: target/release/evalctl, built
    /// first with `cargo build --release --bin evalctl`).
    #[arg(long, value_name = "PATH")]
    pub evalctl: Option<PathBuf>,
    /// Where manifests, saved plans and each phase's output go.
    #[arg(long, value_name = "DIR", default_value = "target/bench")]
    pub work_dir: PathBuf,
    /// Run only the client's phases: a plan with evalctl's default
    /// concurrency (metric settings only; with and without the rate limit)
    /// and the 429-storm apply (see examples/bench/client.rs).
    #[arg(long)]
    pub client: bool,
    /// Run only the hostile-server phase: evalctl's peak RSS when the
    /// service answers with large bodies at full concurrency and endless
    /// catalogue pages, against the documented bound (see
    /// examples/bench/hostile_server.rs).
    #[arg(long)]
    pub hostile_server: bool,
    /// Latency of the 429-storm phase's sandbox, in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub storm_latency_ms: u64,
    /// Fractions of requests answered 429 in the 429-storm phase.
    #[arg(long, value_delimiter = ',', default_value = "0.3,0.5")]
    pub storm_rates: Vec<f64>,
    /// Measure nothing: write the config repo, serve the population (with
    /// the latency) and print how to point evalctl at it, for profiling one
    /// command by hand. Stops on Ctrl-C.
    #[arg(long)]
    pub serve: bool,
}

impl Args {
    /// The concurrency the main phases run at.
    pub fn concurrency(&self) -> u16 {
        self.concurrency.unwrap_or_else(evalctl_default_concurrency)
    }
}

/// Why the benchmark could not run (a missed target is not an error).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file or a process could not be used.
    #[error("{what}: {source}")]
    Io {
        /// What was being used.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The sandbox could not start or change.
    #[error("sandbox: {0}")]
    Sandbox(#[from] evalctl::sandbox::SandboxError),
    /// The measuring wrapper failed.
    #[error("{0}")]
    Wrapper(String),
    /// evalctl could not be built or found.
    #[error("{0}")]
    Build(String),
}

impl BenchError {
    /// An I/O error about `what`.
    pub fn io(what: impl AsRef<Path>, source: std::io::Error) -> Self {
        BenchError::Io {
            what: what.as_ref().display().to_string(),
            source,
        }
    }
}

/// evalctl's default `--concurrency`, read from its command-line definition.
fn evalctl_default_concurrency() -> u16 {
    use clap::CommandFactory;
    evalctl::cli::Cli::command()
        .find_subcommand("plan")
        .and_then(|plan| {
            plan.get_arguments()
                .find(|a| a.get_id() == "concurrency")
                .and_then(|a| a.get_default_values().first())
                .and_then(|v| v.to_str())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(8)
}

/// Builds (unless `--evalctl` names one) and locates the evalctl binary.
fn locate_evalctl(args: &Args) -> Result<PathBuf, BenchError> {
    if let Some(path) = &args.evalctl {
        return Ok(path.clone());
    }
    let me = std::env::current_exe().map_err(|e| BenchError::io("the benchmark's own path", e))?;
    // target/<profile>/examples/bench -> target/
    let target = me
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .ok_or_else(|| BenchError::Build(format!("cannot find target/ from {}", me.display())))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    eprintln!("building the release evalctl: cargo build --release --bin evalctl");
    let status = std::process::Command::new(cargo)
        .args(["build", "--release", "--bin", "evalctl"])
        .status()
        .map_err(|e| BenchError::io("cargo build --release --bin evalctl", e))?;
    if !status.success() {
        return Err(BenchError::Build(format!(
            "cargo build --release --bin evalctl failed ({status})"
        )));
    }
    let path = target.join("release").join("evalctl");
    if path.is_file() {
        Ok(path)
    } else {
        Err(BenchError::Build(format!("{} is missing", path.display())))
    }
}

fn main() -> ExitCode {
    let raw: Vec<OsString> = std::env::args_os().collect();
    if raw.get(1).is_some_and(|a| a == measure::WRAP_FLAG) {
        return match measure::wrap(&raw[2..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench wrapper: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let args = Args::parse();
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build of the benchmark, and the sandbox runs inside it: use `cargo run --release --example bench`"
        );
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), BenchError> {
    if args.serve {
        return phases::serve(args);
    }
    let evalctl = locate_evalctl(args)?;
    let work = population::WorkDir {
        root: args.work_dir.clone(),
    };
    if args.client {
        return client::run(args, &evalctl, &work);
    }
    if args.hostile_server {
        return hostile_server::run(args, &evalctl, &work);
    }
    std::fs::create_dir_all(work.logs()).map_err(|e| BenchError::io(work.logs(), e))?;
    report::header(args, &evalctl);
    let mut suites = Vec::new();
    for n in 0..args.runs.max(1) {
        if args.runs > 1 {
            println!("\n#### run {} of {}", n + 1, args.runs);
        }
        let suite = phases::run_suite(args, &evalctl, &work)?;
        report::suite(args, &suite);
        suites.push(suite);
    }
    report::summary(args, &suites);
    Ok(())
}

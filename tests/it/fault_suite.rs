//! The fault suite (issue 5 §2): the real binary plans and applies a
//! non-trivial config repo (`fault_support::REPO`: three log streams with
//! scorers and segment filters, an experiment, sections with a rename,
//! favorites, templates of both kinds with an update and a replace, an
//! integration with a `${ENV}` token) while the sandbox injects one kind of
//! fault per test: 5xx before and after processing (drawn from 500, 502, 503
//! and 504; 500 alone on each kind of write in
//! `five_hundred_on_each_kind_of_write`), 429 storms with `Retry-After`,
//! latency spikes past the client's timeout, connections dropped before and
//! after processing, and the sandbox SIGKILLed and restarted from its
//! `--state` file in the middle of the apply.
//!
//! Under the fault, `plan` first: it shows exactly the plan made without
//! faults, or fails with a message (a failed read is never taken for a
//! missing object). Then `apply`. After it: it exited 0 or 3 (or 1 with a
//! message), its report agrees with its exit status, and every change it
//! reports as succeeded is live (read through the API, checked against a
//! hand-written expectation, not the planner). Then, faults off, a second apply exits 0, `plan
//! --detailed-exitcode` exits 0, live equals the desired state object by
//! object, and no section or template name occurs twice.
//!
//! Fault decisions are seeded (which request gets which fault still depends
//! on the order concurrent requests arrive in, so the rates are high enough
//! that every test sees its fault hit writes, and asserts it did). The first
//! apply runs with `--max-retries 8`, so that reads seldom exhaust their
//! retries and the faults reach the writes. Each run is bounded in time
//! ([`RUN_LIMIT`]). `FAULT_SUITE_LOG=1` prints the sandbox's request log.
//!
//! The goal runs (issue 10 §2, `fault_support::goal`) measure convergence
//! over many seeded runs, each under one fault profile (30% 5xx, 30% dropped
//! connections, 30% 429, latency spikes, all at once) with the client's
//! default settings: how often the first apply converges, how many applies
//! the worst run needed, duplicates, lost updates, and the time of a first
//! apply against the same apply without faults. CI runs
//! `FAULT_GOAL_RUNS` of them (default 10); the long run is ignored by
//! default: `cargo test --test it fault_goal_long -- --ignored --nocapture`
//! (200 runs; `FAULT_GOAL_SEED` picks the first seed).

use crate::e2e_support;
use crate::fault_support;

use std::time::{Duration, Instant};

use e2e_support::{Run, TestContext};
use evalctl::plan::ApplyReport;
use evalctl::sandbox::{Fault, Faults, RequestRecord};
use fault_support::goal::{self, Figures, MAX_APPLIES, RunResult};
use fault_support::{
    Expected, LiveView, OPENAI_TOKEN, SandboxProcess, check_honest, client_for, expected,
    free_port, plan_changes, write_repo,
};

/// The longest one run of the binary may take.
const RUN_LIMIT: Duration = Duration::from_secs(45);

fn context() -> TestContext {
    let ctx = TestContext::new().env("OPENAI_API_KEY", OPENAI_TOKEN);
    write_repo(ctx.dir.path());
    ctx
}

fn read_live(ctx: &TestContext, base_url: &str, expected: &Expected) -> LiveView {
    let client = client_for(base_url);
    ctx.block_on(LiveView::read(&client, expected))
        .unwrap_or_else(|e| panic!("live state cannot be read: {e}"))
}

/// The first apply, under faults, against `base_url`.
fn first_apply(ctx: &TestContext, base_url: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "apply",
        "repo",
        "--auto-approve",
        "-o",
        "json",
        "--max-retries",
        "8",
    ];
    args.extend_from_slice(extra);
    ctx.evalctl_bounded(&[("EVALCTL_BASE_URL", base_url)], &args, RUN_LIMIT)
}

/// With faults off: the second apply converges, the plan is empty, live
/// equals desired, nothing is duplicated.
fn converges_after(ctx: &TestContext, base_url: &str, expected: &Expected) {
    let env = [("EVALCTL_BASE_URL", base_url)];
    ctx.evalctl_bounded(&env, &["apply", "repo", "--auto-approve"], RUN_LIMIT)
        .expect(0);
    let plan = ctx.evalctl_bounded(&env, &["plan", "repo", "--detailed-exitcode"], RUN_LIMIT);
    plan.expect(0);
    assert!(plan.stdout.contains("No changes"), "{}", plan.stdout);
    let live = read_live(ctx, base_url, expected);
    let mismatches = live.mismatches(expected);
    assert!(
        mismatches.is_empty(),
        "live differs from the desired state:\n  {}",
        mismatches.join("\n  ")
    );
}

/// Shows what a run did: the harness prints it when the test fails (or
/// with `--nocapture`).
#[allow(
    clippy::print_stderr,
    reason = "test output, captured by the harness and shown on failure"
)]
fn show(text: &str) {
    eprintln!("{text}");
}

/// Shows what the report says about each change that needed explaining.
fn show_details(report: Option<&ApplyReport>) {
    for outcome in report.iter().flat_map(|r| &r.outcomes) {
        if let Some(detail) = &outcome.detail {
            show(&format!(
                "  {} {:?}: {detail}",
                outcome.address, outcome.status
            ));
        }
    }
    for u in report.iter().flat_map(|r| &r.unconverged) {
        show(&format!("  {} did not converge: {:?}", u.address, u.fields));
    }
}

fn is_write(r: &RequestRecord) -> bool {
    r.method != "GET"
        && !r.path.ends_with("/search")
        && !r.path.ends_with("/paginated")
        && !r.path.ends_with("/list")
}

/// Runs the first apply under `faults`, checks it was honest and that the
/// faults hit writes (`hit` says which), then that everything converges.
fn suite_case(faults: Faults, extra: &[&str], hit: impl Fn(&RequestRecord) -> bool) {
    let ctx = context();
    let expected = expected();
    let url = ctx.sandbox.base_url();
    let spike = faults.spike;
    let env = [("EVALCTL_BASE_URL", url.as_str())];
    let mut plan_args = vec![
        "plan",
        "repo",
        "--detailed-exitcode",
        "-o",
        "json",
        "--max-retries",
        "8",
    ];
    plan_args.extend_from_slice(extra);
    let reference = ctx.evalctl_bounded(&env, &plan_args, RUN_LIMIT);
    reference.expect(2);
    ctx.faults(faults);
    // A plan under faults is the plan without them, or an error: a read
    // that failed is never taken for an object that does not exist.
    let planned = ctx.evalctl_bounded(&env, &plan_args, RUN_LIMIT);
    match planned.status {
        2 => assert_eq!(
            plan_changes(&planned.stdout),
            plan_changes(&reference.stdout),
            "the plan under faults differs from the plan without them\n{}",
            planned.stderr
        ),
        1 => assert!(planned.stderr.contains("error"), "{}", planned.all_output()),
        other => panic!("plan exited {other}\n{}", planned.all_output()),
    }
    let started = Instant::now();
    let first = first_apply(&ctx, &url, extra);
    let took = started.elapsed();
    // Requests still held by a spike land before live is read.
    std::thread::sleep(spike + Duration::from_millis(100));
    ctx.faults(Faults::none());
    let log = ctx.sandbox.requests();
    let hits = log.iter().filter(|r| is_write(r) && hit(r)).count();
    if std::env::var("FAULT_SUITE_LOG").is_ok() {
        for r in &log {
            show(&format!(
                "{} {} {} {:?} {:?} spiked={}",
                r.seq, r.method, r.path, r.status, r.fault, r.spiked
            ));
        }
    }
    show(&format!(
        "plan under faults: exit {}; first apply: exit {} in {took:?}, {} requests, {hits} writes hit\n{}",
        planned.status,
        first.status,
        log.len(),
        first.stderr
    ));
    assert!(
        hits > 0,
        "the faults never hit a write: the test proves nothing\n{}",
        first.all_output()
    );
    let live = read_live(&ctx, &url, &expected);
    let report = check_honest(first.status, &first.stdout, &first.stderr, &live, &expected);
    show_details(report.as_ref());
    converges_after(&ctx, &url, &expected);
}

#[test]
fn baseline_without_faults_applies_in_one_run() {
    let ctx = context();
    let expected = expected();
    let url = ctx.sandbox.base_url();
    let first = first_apply(&ctx, &url, &[]);
    first.expect(0);
    let live = read_live(&ctx, &url, &expected);
    let report = check_honest(first.status, &first.stdout, &first.stderr, &live, &expected)
        .expect("a report");
    // Every managed object but the `Quality` section, which is already as wanted.
    assert_eq!(report.outcomes.len(), expected.addresses().len() - 1);
    assert!(
        live.mismatches(&expected).is_empty(),
        "{:?}",
        live.mismatches(&expected)
    );
    converges_after(&ctx, &url, &expected);
}

#[test]
fn five_xx_before_processing() {
    suite_case(
        Faults {
            fail_rate: 0.3,
            seed: 501,
            ..Faults::default()
        },
        &[],
        |r| matches!(r.fault, Some(Fault::FailBefore(_))),
    );
}

#[test]
fn five_xx_after_processing() {
    suite_case(
        Faults {
            fail_after_rate: 0.3,
            seed: 502,
            ..Faults::default()
        },
        &[],
        |r| matches!(r.fault, Some(Fault::FailAfter(_))),
    );
}

/// Issue 22 item 9: 500 as well as 502/503/504 (the other cases draw from all four),
/// here on its own, on each kind of write in turn: 70% of PUTs and PATCHes and every
/// DELETE (there are few) are answered 500, half before processing and half after, and
/// 40% of POSTs (searches and listings are POSTs too, and must get through).
#[test]
fn five_hundred_on_each_kind_of_write() {
    for (method, rate, seed) in [
        ("PATCH", 0.35, 511),
        ("PUT", 0.35, 512),
        ("DELETE", 0.5, 513),
        ("POST", 0.2, 514),
    ] {
        show(&format!("500 on {method}"));
        suite_case(
            Faults {
                fail_rate: rate,
                fail_after_rate: rate,
                fail_statuses: vec![500],
                method: Some(method.to_owned()),
                seed,
                ..Faults::default()
            },
            &[],
            |r| {
                r.method == method
                    && matches!(
                        r.fault,
                        Some(Fault::FailBefore(500) | Fault::FailAfter(500))
                    )
            },
        );
    }
}

#[test]
fn a_429_storm_with_retry_after() {
    suite_case(
        Faults {
            throttle_rate: 0.15,
            retry_after_secs: 1,
            seed: 503,
            ..Faults::default()
        },
        &[],
        |r| matches!(r.fault, Some(Fault::Throttle)),
    );
}

#[test]
fn a_rate_limit_below_the_clients_pace() {
    // 10 a second (a burst of 10): below what the client sends even on a
    // loaded machine, so the limit answers writes too (at 25, a busy 2-core
    // machine sometimes sent slower than that, and no write met a 429).
    suite_case(
        Faults {
            rate_limit: Some(10.0),
            seed: 504,
            ..Faults::default()
        },
        &[],
        |r| matches!(r.fault, Some(Fault::RateLimit)),
    );
}

#[test]
fn latency_spikes_past_the_client_timeout() {
    suite_case(
        Faults {
            spike_rate: 0.15,
            spike: Duration::from_millis(1500),
            seed: 505,
            ..Faults::default()
        },
        &["--timeout", "200ms"],
        |r| r.spiked,
    );
}

#[test]
fn connections_dropped_before_processing() {
    suite_case(
        Faults {
            drop_rate: 0.25,
            seed: 506,
            ..Faults::default()
        },
        &[],
        |r| matches!(r.fault, Some(Fault::Drop)),
    );
}

#[test]
fn connections_dropped_after_processing() {
    suite_case(
        Faults {
            drop_after_rate: 0.25,
            seed: 507,
            ..Faults::default()
        },
        &[],
        |r| matches!(r.fault, Some(Fault::DropAfter)),
    );
}

#[test]
fn every_fault_at_once() {
    suite_case(
        Faults {
            fail_rate: 0.08,
            fail_after_rate: 0.08,
            throttle_rate: 0.05,
            retry_after_secs: 1,
            drop_rate: 0.05,
            drop_after_rate: 0.08,
            spike_rate: 0.05,
            spike: Duration::from_millis(1500),
            jitter: Duration::from_millis(10),
            seed: 508,
            ..Faults::default()
        },
        &["--timeout", "400ms"],
        |r| r.fault.is_some_and(|f| f.processes()),
    );
}

/// The sandbox runs as its own process with a state file; it is SIGKILLed
/// once the apply's first writes are acknowledged (persisted), started again
/// on the same port after an outage, and killed and restarted once more after
/// the apply: everything the apply reported as succeeded must survive.
#[test]
fn sandbox_killed_and_restarted_mid_apply() {
    let ctx = context();
    let expected = expected();
    let state = ctx.path("sandbox-state.json");
    let mut sandbox = SandboxProcess::start(&state, free_port(), &["--latency-ms", "40"]);
    let url = sandbox.base_url();
    let initial = crate::sandbox_support::state_bytes(&state);

    let first = std::thread::scope(|scope| {
        let apply = scope.spawn(|| first_apply(&ctx, &url, &["--concurrency", "4"]));
        // Wait for the first acknowledged write: the state file changes
        // before the sandbox answers.
        let deadline = Instant::now() + Duration::from_secs(30);
        while crate::sandbox_support::state_bytes(&state) == initial {
            assert!(
                !apply.is_finished(),
                "the apply ended before any write reached the state file"
            );
            assert!(Instant::now() < deadline, "no write reached the state file");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(60));
        assert!(
            !apply.is_finished(),
            "the apply finished before the sandbox could be killed: slow the sandbox down"
        );
        sandbox.kill();
        std::thread::sleep(Duration::from_millis(700));
        sandbox.restart();
        apply.join().expect("the apply thread")
    });
    show(&format!(
        "first apply: exit {}\n{}",
        first.status, first.stderr
    ));

    // Kill it again: what it acknowledged must be in the state file.
    sandbox.restart();
    let live = read_live(&ctx, &url, &expected);
    let report = check_honest(first.status, &first.stdout, &first.stderr, &live, &expected);
    show_details(report.as_ref());
    if let Some(report) = &report {
        assert!(
            report.counts().succeeded > 0,
            "nothing succeeded: {}",
            first.all_output()
        );
    }
    converges_after(&ctx, &url, &expected);

    // And once more, after convergence: nothing is lost across a restart.
    sandbox.restart();
    let live = read_live(&ctx, &url, &expected);
    assert!(
        live.mismatches(&expected).is_empty(),
        "{:?}",
        live.mismatches(&expected)
    );
}

/// The longest one apply of a goal run may take.
const GOAL_LIMIT: Duration = Duration::from_secs(120);

/// Applies the repo under `seed`'s profile until it converges (see
/// `fault_support::goal`); every apply is checked for honesty.
fn goal_run(seed: u64) -> RunResult {
    let ctx = context();
    let expected = expected();
    let url = ctx.sandbox.base_url();
    let env = [("EVALCTL_BASE_URL", url.as_str())];
    let mut result = RunResult {
        seed,
        applies: None,
        exits: Vec::new(),
        first_apply: Duration::ZERO,
        duplicates: 0,
        lost_updates: 0,
    };
    for n in 1..=MAX_APPLIES {
        ctx.faults(goal::profile(seed));
        let started = Instant::now();
        let run = ctx.evalctl_bounded(
            &env,
            &["apply", "repo", "--auto-approve", "-o", "json"],
            GOAL_LIMIT,
        );
        if n == 1 {
            result.first_apply = started.elapsed();
        }
        // Requests still held by a spike land before live is read.
        std::thread::sleep(Duration::from_millis(500));
        ctx.faults(Faults::none());
        result.exits.push(run.status);
        let live = read_live(&ctx, &url, &expected);
        check_honest(run.status, &run.stdout, &run.stderr, &live, &expected);
        let duplicates = live.duplicates();
        result.duplicates += duplicates.len();
        let mismatches: Vec<String> = live
            .mismatches(&expected)
            .into_iter()
            .filter(|m| !duplicates.contains(m))
            .collect();
        let plan = ctx.evalctl_bounded(&env, &["plan", "repo", "--detailed-exitcode"], RUN_LIMIT);
        let converged = plan.status == 0 && mismatches.is_empty() && duplicates.is_empty();
        // Exit 0 says "converged": the plan after it must be empty.
        assert!(
            run.status != 0 || converged,
            "seed {seed}, apply {n} exited 0 but did not converge: {mismatches:?} {duplicates:?}\n{}\n{}",
            plan.all_output(),
            run.all_output()
        );
        result.lost_updates = mismatches.len();
        if converged {
            result.applies = Some(n);
            break;
        }
        assert_eq!(plan.status, 2, "seed {seed}\n{}", plan.all_output());
        show(&format!(
            "seed {seed} ({}): apply {n} exited {}, not converged: {mismatches:?} {duplicates:?}",
            goal::PROFILES[(seed % 5) as usize],
            run.status
        ));
        let report = fault_support::parse_report(&run.stdout);
        show_details(report.as_ref());
    }
    result
}

/// The time of a first apply without faults at the goal runs' latency
/// (the median of three).
fn no_fault_apply() -> Duration {
    let mut times: Vec<Duration> = (0..3)
        .map(|i| {
            let ctx = context();
            ctx.faults(goal::no_faults(i));
            let url = ctx.sandbox.base_url();
            let started = Instant::now();
            ctx.evalctl_bounded(
                &[("EVALCTL_BASE_URL", url.as_str())],
                &["apply", "repo", "--auto-approve"],
                GOAL_LIMIT,
            )
            .expect(0);
            started.elapsed()
        })
        .collect();
    times.sort();
    times[1]
}

/// `runs` goal runs from `FAULT_GOAL_SEED` (default 10,000) on; prints the
/// figures and checks the goal.
fn goal_runs(runs: u64) {
    let first = std::env::var("FAULT_GOAL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000u64);
    let no_fault = no_fault_apply();
    let mut figures = Figures::default();
    for seed in first..first + runs {
        figures.runs.push(goal_run(seed));
    }
    show(&figures.render(no_fault));
    let slow: Vec<&RunResult> = figures
        .runs
        .iter()
        .filter(|r| r.applies.is_none_or(|a| a > 2))
        .collect();
    assert!(
        slow.is_empty(),
        "runs that needed more than two applies: {slow:?}"
    );
    assert_eq!(figures.duplicates(), 0);
    assert_eq!(figures.lost_updates(), 0);
    if runs >= 100 {
        let rate = figures.first_apply_converged() as f64 / runs as f64;
        assert!(
            rate >= 0.95,
            "first apply converged in {:.1}% of runs",
            100.0 * rate
        );
    }
}

#[test]
fn fault_goal() {
    let runs = std::env::var("FAULT_GOAL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    goal_runs(runs);
}

#[test]
#[ignore = "the long run (200 seeded runs, about 15 minutes): cargo test --test it fault_goal_long -- --ignored --nocapture"]
fn fault_goal_long() {
    goal_runs(200);
}

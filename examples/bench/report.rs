//! Printing the benchmark's figures: the machine, each phase (wall time,
//! lower bound and ratio, peak RSS, requests by kind), the targets with
//! PASS/MISS, the throttled timeline, and a summary table (medians over
//! `--runs`) in markdown, ready for docs/performance.md.

use std::path::Path;
use std::time::Duration;

use super::Args;
use super::measure::{Stamped, Traffic};
use super::phases::{Phase, Suite, Throttled, pages};

/// Plan wall time over its lower bound, at most.
const PLAN_RATIO_TARGET: f64 = 1.5;
/// Peak RSS of any evalctl run, under (bytes).
const RSS_TARGET_BYTES: u64 = 100_000_000;
/// Wall time of `validate`, under.
const VALIDATE_TARGET: Duration = Duration::from_secs(1);
/// Every phase a suite ran.
fn every_phase(s: &Suite) -> Vec<&Phase> {
    [
        &s.plan,
        &s.apply,
        &s.converged,
        &s.drift,
        &s.validate,
        &s.hostile,
        &s.long_line,
        &s.many_references,
    ]
    .into_iter()
    .chain(&s.serial)
    .chain(s.throttled.iter().flat_map(|t| [&t.plan, &t.apply]))
    .collect()
}

/// What the hostile phase validates.
const HOSTILE_FILES: &str =
    "an alias bomb, 100,000-deep nesting, a 9 MiB file, 2,000,000 nodes and 20,000 problems";

/// The hostile files are all refused (exit 65) in under a second and under the RSS target.
fn hostile_ok(p: &Phase) -> bool {
    p.exit_ok() && p.run.wall < VALIDATE_TARGET && p.run.max_rss_kib * 1024 < RSS_TARGET_BYTES
}

/// Share of requests answered 429 (each is retried), under.
const RETRY_SHARE_TARGET: f64 = 0.10;
/// Goodput as a share of the rate limit, at least.
const GOODPUT_TARGET: f64 = 0.80;

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn mb(kib: u64) -> String {
    format!("{:.1} MB", kib as f64 * 1024.0 / 1e6)
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The machine: cores, CPU model, OS.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| format!(", Linux {}", k.trim()))
        .unwrap_or_default();
    format!("{cores} cores, {cpu}, {os}{kernel}")
}

/// What is measured, on what.
pub fn header(args: &Args, evalctl: &Path) {
    println!("# evalctl benchmark");
    println!("machine: {}", machine());
    println!("evalctl: {}", evalctl.display());
    println!(
        "population: {} projects × {} log streams = {} log streams, {} experiments per project; latency {} ms per request; concurrency {} (evalctl's default unless --concurrency)",
        args.projects,
        args.log_streams,
        thousands(args.projects * args.log_streams),
        args.experiments,
        args.latency_ms,
        args.concurrency()
    );
    println!(
        "outputs of each phase: {}",
        args.work_dir.join("logs").display()
    );
}

fn print_traffic(t: &Traffic) {
    println!(
        "  requests {} ({} reads, {} writes; {} answered 429; {} other failures)",
        thousands(t.total),
        thousands(t.reads),
        thousands(t.writes),
        thousands(t.rate_limited),
        thousands(t.kinds.values().map(|k| k.failed).sum())
    );
    for (key, kind) in &t.kinds {
        let rw = if kind.read { "read " } else { "write" };
        println!("    {:>6}  {rw}  {key}", thousands(kind.requests));
    }
}

fn print_phase(p: &Phase, service: Option<Duration>) {
    println!("\n## {}", p.name);
    println!("  $ {}", p.command);
    let exit = p.run.exit.map_or("a signal".to_owned(), |c| c.to_string());
    println!(
        "  exit {exit} (expected {}){}",
        p.expected_exit,
        if p.exit_ok() { "" } else { "  UNEXPECTED" }
    );
    print!("  wall {}", secs(p.run.wall));
    if let (Some(bound), Some(depth), Some(ratio)) = (p.lower_bound(), &p.depth, p.ratio()) {
        println!(
            "; lower bound {} = depth {} × {} ms + {} requests × {} ms / {}; ratio {ratio:.2}",
            secs(bound),
            depth.levels,
            p.latency.as_millis(),
            thousands(p.traffic.total),
            p.latency.as_millis(),
            p.concurrency
        );
        println!("  depth: {}", depth.why);
        if let Some((service, at)) = service.and_then(|s| Some((s, p.ratio_at(s)?))) {
            println!(
                "  with the sandbox's measured service time ({:.1} ms a request) instead of {} ms: ratio {at:.2} (evalctl's own overhead)",
                service.as_secs_f64() * 1e3,
                p.latency.as_millis()
            );
        }
    } else {
        println!();
    }
    let rss_ok = p.run.max_rss_kib * 1024 < RSS_TARGET_BYTES;
    println!(
        "  peak RSS {}  [target < 100 MB: {}]",
        mb(p.run.max_rss_kib),
        verdict(rss_ok)
    );
    if p.traffic.total > 0 {
        print_traffic(&p.traffic);
    }
}

/// The converged plan's read budget: objects + pagination.
fn read_budget(s: &Suite) -> (usize, usize) {
    let m = &s.managed;
    let lookups = pages(s.size.projects)
        + m.projects * (pages(m.max_log_streams) + usize::from(m.max_experiments > 0))
        + pages(s.scorers);
    (m.objects(), lookups)
}

/// People the converged plan names (who created an undeclared object), each
/// looked up once: objects too.
fn people(s: &Suite) -> usize {
    s.converged.traffic.of("get_user")
}

fn converged_ok(s: &Suite) -> bool {
    let (objects, lookups) = read_budget(s);
    let t = &s.converged.traffic;
    t.writes == 0 && t.reads <= objects + people(s) + lookups && t.max_get_repeats <= 1
}

/// Prints every phase of one run and its targets.
pub fn suite(args: &Args, s: &Suite) {
    println!(
        "\npopulation: {} log streams, {} experiments; the plan from scratch has {} changes",
        thousands(s.size.projects * s.size.log_streams),
        thousands(s.size.projects * s.size.experiments),
        thousands(s.changes)
    );
    println!(
        "the sandbox's service time: {:.1} ms a request with {} in flight ({} ms injected; the rest is its timer granularity, handling and loopback HTTP)",
        s.service_time.as_secs_f64() * 1e3,
        s.plan.concurrency,
        args.latency_ms
    );
    let service = Some(s.service_time);
    print_phase(&s.plan, service);
    if let Some(ratio) = s.plan.ratio() {
        println!(
            "  target: plan of 2,000 log streams at 20 ms within {PLAN_RATIO_TARGET}× the lower bound at the default concurrency: {ratio:.2}  [{}]",
            verdict(ratio <= PLAN_RATIO_TARGET)
        );
    }
    if let Some(serial) = &s.serial {
        print_phase(serial, None);
        let speedup = serial.run.wall.as_secs_f64() / s.plan.run.wall.as_secs_f64().max(1e-9);
        println!(
            "  speedup of concurrency {} over 1: {speedup:.1}×",
            s.plan.concurrency
        );
    }
    print_phase(&s.apply, service);
    print_phase(&s.converged, service);
    let (objects, lookups) = read_budget(s);
    let m = &s.managed;
    println!(
        "  objects read: {} = {} log-stream settings + {} experiment settings + {} dashboards + {} template sets + {} people named in notes (each GET path once); pagination: {} listing pages (projects, run searches, catalog)",
        thousands(objects + people(s)),
        thousands(m.log_stream_settings),
        thousands(m.experiment_settings),
        thousands(m.dashboards),
        thousands(m.template_sets),
        people(s),
        thousands(lookups)
    );
    println!(
        "  target: no writes ({}), at most one read per object plus pagination ({} reads ≤ {}; each GET path at most {}×)  [{}]",
        s.converged.traffic.writes,
        thousands(s.converged.traffic.reads),
        thousands(objects + people(s) + lookups),
        s.converged.traffic.max_get_repeats,
        verdict(converged_ok(s))
    );
    print_phase(&s.drift, service);
    println!(
        "  {} objects changed out of band; drift reported {} change(s)",
        s.drifted,
        s.drift_changes
            .map_or("an unreadable number of".to_owned(), |n| n.to_string())
    );
    print_phase(&s.validate, None);
    println!(
        "  target: validate of {} files under 1 s: {}  [{}]",
        thousands(args.validate_files),
        secs(s.validate.run.wall),
        verdict(s.validate.run.wall < VALIDATE_TARGET)
    );
    print_phase(&s.hostile, None);
    println!(
        "  target: {HOSTILE_FILES} refused under 1 s, in bounded memory: {}, {}  [{}]",
        secs(s.hostile.run.wall),
        mb(s.hostile.run.max_rss_kib),
        verdict(hostile_ok(&s.hostile))
    );
    print_phase(&s.long_line, None);
    println!(
        "  target: a valid one-line 8 MiB flow list of {} values accepted under 1 s: {}, {}  [{}]",
        thousands(super::population::LONG_LINE_VALUES),
        secs(s.long_line.run.wall),
        mb(s.long_line.run.max_rss_kib),
        verdict(s.long_line.exit_ok() && s.long_line.run.wall < VALIDATE_TARGET)
    );
    print_phase(&s.many_references, None);
    println!(
        "  target: {} references in one scalar (and as many escapes) accepted under 1 s: {}, {}  [{}]",
        thousands(super::population::REFERENCES),
        secs(s.many_references.run.wall),
        mb(s.many_references.run.max_rss_kib),
        verdict(s.many_references.exit_ok() && s.many_references.run.wall < VALIDATE_TARGET)
    );
    if let Some(t) = &s.throttled {
        throttled(t);
    }
}

/// Goodput (2xx per second of the phase) and the share of requests answered 429.
fn throttle_figures(p: &Phase) -> (f64, f64) {
    let goodput = p.traffic.succeeded as f64 / p.run.wall.as_secs_f64().max(1e-9);
    let share = p.traffic.rate_limited as f64 / (p.traffic.total.max(1)) as f64;
    (goodput, share)
}

/// Congestion events (429s less than a second apart are one event) and,
/// for each, the longest silence (no answer at all) in the three seconds
/// after its first 429: the shared pause, once the requests already in
/// flight have been answered.
fn pauses(timeline: &[Stamped]) -> Vec<Duration> {
    const WINDOW: Duration = Duration::from_secs(3);
    let mut starts = Vec::new();
    let mut last_429: Option<Duration> = None;
    for r in timeline.iter().filter(|r| r.status == Some(429)) {
        if last_429.is_none_or(|t| r.at.saturating_sub(t) > Duration::from_secs(1)) {
            starts.push(r.at);
        }
        last_429 = Some(r.at);
    }
    starts
        .into_iter()
        .map(|start| {
            let mut previous = start;
            let mut longest = Duration::ZERO;
            for r in timeline
                .iter()
                .filter(|r| r.at >= start && r.at <= start + WINDOW)
            {
                longest = longest.max(r.at - previous);
                previous = r.at;
            }
            longest
        })
        .collect()
}

/// One character per 100 ms: how many requests were answered 2xx (height),
/// and a second row marking the buckets with 429s.
fn sparkline(timeline: &[Stamped]) -> Vec<String> {
    const BUCKET: Duration = Duration::from_millis(100);
    const WIDTH: usize = 100;
    let Some(last) = timeline.last() else {
        return Vec::new();
    };
    let n = (last.at.as_millis() / BUCKET.as_millis()) as usize + 1;
    let mut ok = vec![0usize; n];
    let mut limited = vec![false; n];
    for r in timeline {
        let i = (r.at.as_millis() / BUCKET.as_millis()) as usize;
        match r.status {
            Some(429) => limited[i] = true,
            Some(s) if (200..300).contains(&s) => ok[i] += 1,
            _ => {}
        }
    }
    let top = ok.iter().copied().max().unwrap_or(1).max(1);
    let bars = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let mut lines = Vec::new();
    for start in (0..n).step_by(WIDTH) {
        let end = (start + WIDTH).min(n);
        let row: String = ok[start..end]
            .iter()
            .map(|c| bars[(c * 8).div_ceil(top).min(8)])
            .collect();
        let marks: String = limited[start..end]
            .iter()
            .map(|l| if *l { '!' } else { ' ' })
            .collect();
        lines.push(format!("  {:>5.1}s |{row}|", start as f64 / 10.0));
        if marks.contains('!') {
            lines.push(format!("         |{}", marks.trim_end()));
        }
    }
    lines.push(format!(
        "  (one column per 100 ms; █ = {top} answers; ! = some answered 429)"
    ));
    lines
}

fn throttled(t: &Throttled) {
    println!(
        "\n# throttled: the sandbox allows {} requests per second (token bucket, 429 with Retry-After beyond)",
        t.limit
    );
    for (phase, timeline) in [(&t.plan, &t.plan_timeline), (&t.apply, &t.apply_timeline)] {
        print_phase(phase, None);
        let (goodput, share) = throttle_figures(phase);
        let floor = phase.traffic.succeeded as f64 / t.limit;
        println!(
            "  goodput {goodput:.0} successful requests/s = {:.0}% of the limit  [target ≥ {:.0}%: {}]; floor at the limit {floor:.2} s (the bucket starts full: a short phase can beat the limit)",
            100.0 * goodput / t.limit,
            100.0 * GOODPUT_TARGET,
            verdict(goodput >= GOODPUT_TARGET * t.limit)
        );
        println!(
            "  retries: {} of {} requests answered 429 and sent again = {:.1}%  [target < 10%: {}]",
            phase.traffic.rate_limited,
            phase.traffic.total,
            100.0 * share,
            verdict(share < RETRY_SHARE_TARGET)
        );
        let waits = pauses(timeline);
        if !waits.is_empty() {
            let mean = waits.iter().sum::<Duration>() / u32::try_from(waits.len()).unwrap_or(1);
            println!(
                "  the client backs off as a whole: {} congestion event(s); after each, no request at all was answered for {} on average (the sandbox's Retry-After is ≥ 1 s: the whole client pauses, not only the request that got the 429)",
                waits.len(),
                secs(mean)
            );
        }
        for line in sparkline(timeline) {
            println!("{line}");
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// One row of the summary table: medians of `phases` (each with its run's
/// service time, when the bound applies at it).
fn row(phases: &[(&Phase, Option<Duration>)], target: &str) {
    let Some((first, _)) = phases.first() else {
        return;
    };
    let wall = median(
        phases
            .iter()
            .map(|(p, _)| p.run.wall.as_secs_f64())
            .collect(),
    );
    let rss = median(
        phases
            .iter()
            .map(|(p, _)| p.run.max_rss_kib as f64 * 1024.0 / 1e6)
            .collect(),
    );
    let bound = first
        .lower_bound()
        .map_or("–".to_owned(), |b| format!("{:.2} s", b.as_secs_f64()));
    let ratio = |f: &dyn Fn(&Phase, Option<Duration>) -> Option<f64>| {
        let v: Vec<f64> = phases.iter().filter_map(|(p, s)| f(p, *s)).collect();
        if v.is_empty() {
            "–".to_owned()
        } else {
            format!("{:.2}", median(v))
        }
    };
    let nominal = ratio(&|p, _| p.ratio());
    let measured = ratio(&|p, s| s.and_then(|s| p.ratio_at(s)));
    let requests = if first.traffic.total > 0 {
        format!(
            "{} ({} writes)",
            thousands(first.traffic.total),
            thousands(first.traffic.writes)
        )
    } else {
        "–".to_owned()
    };
    println!(
        "| {} | {} | {wall:.2} s | {requests} | {bound} | {nominal} | {measured} | {rss:.1} MB | {target} |",
        first.name, first.concurrency,
    );
}

/// The summary table (medians over runs) and the targets.
pub fn summary(args: &Args, suites: &[Suite]) {
    let Some(first) = suites.first() else {
        return;
    };
    println!(
        "\n# summary{}",
        if suites.len() > 1 {
            format!(" (medians of {} runs)", suites.len())
        } else {
            String::new()
        }
    );
    println!("machine: {}\n", machine());
    let service = median(
        suites
            .iter()
            .map(|s| s.service_time.as_secs_f64() * 1e3)
            .collect(),
    );
    println!(
        "population: {} projects × {} log streams, {} experiments per project; {} ms injected latency; the sandbox's measured service time {service:.1} ms a request\n",
        args.projects, args.log_streams, args.experiments, args.latency_ms
    );
    println!(
        "| phase | concurrency | wall | requests | lower bound | wall / bound | wall / bound at service time | peak RSS | target |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let all = |f: &dyn Fn(&Suite) -> Option<&Phase>| -> Vec<(&Phase, Option<Duration>)> {
        suites
            .iter()
            .filter_map(|s| f(s).map(|p| (p, Some(s.service_time))))
            .collect()
    };
    let plan_ratio = median(suites.iter().filter_map(|s| s.plan.ratio()).collect());
    row(
        &all(&|s| Some(&s.plan)),
        &format!(
            "≤ {PLAN_RATIO_TARGET}× bound: {}",
            verdict(plan_ratio <= PLAN_RATIO_TARGET)
        ),
    );
    let serial: Vec<(&Phase, Option<Duration>)> = suites
        .iter()
        .filter_map(|s| s.serial.as_ref().map(|p| (p, None)))
        .collect();
    row(&serial, "");
    row(&all(&|s| Some(&s.apply)), "");
    row(
        &all(&|s| Some(&s.converged)),
        &format!(
            "no writes, ≤ 1 read per object + pages: {}",
            verdict(suites.iter().all(converged_ok))
        ),
    );
    row(&all(&|s| Some(&s.drift)), "");
    let validate = median(
        suites
            .iter()
            .map(|s| s.validate.run.wall.as_secs_f64())
            .collect(),
    );
    row(
        &all(&|s| Some(&s.validate)),
        &format!(
            "{} files < 1 s: {}",
            thousands(args.validate_files),
            verdict(validate < VALIDATE_TARGET.as_secs_f64())
        ),
    );
    row(
        &all(&|s| Some(&s.hostile)),
        &format!(
            "hostile files refused < 1 s: {}",
            verdict(suites.iter().all(|s| hostile_ok(&s.hostile)))
        ),
    );
    row(
        &all(&|s| Some(&s.long_line)),
        &format!(
            "one-line 8 MiB list accepted < 1 s: {}",
            verdict(
                suites
                    .iter()
                    .all(|s| s.long_line.exit_ok() && s.long_line.run.wall < VALIDATE_TARGET)
            )
        ),
    );
    row(
        &all(&|s| Some(&s.many_references)),
        &format!(
            "100,000 references in one scalar < 1 s: {}",
            verdict(suites.iter().all(|s| {
                s.many_references.exit_ok() && s.many_references.run.wall < VALIDATE_TARGET
            }))
        ),
    );
    for pick in [
        (|t: &Throttled| &t.plan) as fn(&Throttled) -> &Phase,
        |t: &Throttled| &t.apply,
    ] {
        let phases: Vec<(&Phase, Option<Duration>)> = suites
            .iter()
            .filter_map(|s| s.throttled.as_ref().map(|t| (pick(t), None)))
            .collect();
        if phases.is_empty() {
            continue;
        }
        let figures: Vec<(f64, f64)> = phases.iter().map(|(p, _)| throttle_figures(p)).collect();
        let goodput = median(figures.iter().map(|f| f.0).collect());
        let share = median(figures.iter().map(|f| f.1).collect());
        row(
            &phases,
            &format!(
                "goodput {goodput:.0}/s = {:.0}% of {}/s; 429s {:.1}% of requests (< 10%: {})",
                100.0 * goodput / args.rate_limit,
                args.rate_limit,
                100.0 * share,
                verdict(share < RETRY_SHARE_TARGET)
            ),
        );
    }
    let peak = suites
        .iter()
        .flat_map(|s| {
            every_phase(s)
                .into_iter()
                .map(|p| p.run.max_rss_kib)
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0);
    println!(
        "\npeak RSS of any evalctl run: {}  [target < 100 MB: {}]",
        mb(peak),
        verdict(peak * 1024 < RSS_TARGET_BYTES)
    );
    if let Some(serial) = &first.serial {
        let speedup = median(
            suites
                .iter()
                .filter_map(|s| {
                    s.serial
                        .as_ref()
                        .map(|x| x.run.wall.as_secs_f64() / s.plan.run.wall.as_secs_f64().max(1e-9))
                })
                .collect(),
        );
        println!(
            "speedup of concurrency {} over concurrency {}: {speedup:.1}×",
            first.plan.concurrency, serial.concurrency
        );
    }
    let unexpected: Vec<String> = suites
        .iter()
        .flat_map(|s| {
            every_phase(s)
                .into_iter()
                .filter(|p| !p.exit_ok())
                .map(|p| p.name.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    if !unexpected.is_empty() {
        println!("UNEXPECTED exit statuses: {}", unexpected.join(", "));
    }
}

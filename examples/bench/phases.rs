//! The phases of one benchmark run, and the lower bound of each.
//!
//! Lower bound: `depth × latency + requests × latency / concurrency`. The
//! depth is the longest chain of requests that must wait for one another,
//! computed from what the phase did:
//! - loading live state: the project listing's pages, then one project's
//!   run search pages (the largest project), then the per-run reads
//!   (metric settings and dashboard, concurrently): `pages(P) + pages(L) + 1`
//!   (3 for the default population). The catalog chain (its pages, then
//!   pinned versions) runs alongside and is shorter.
//! - after the plan: +1 when it listed the projects of touched scorer
//!   versions (blast radius) or looked up people: evalctl runs the two
//!   lookups at once (`enrich` in `src/commands/reconcile.rs`).
//! - apply: + one round trip per apply stage that has changes (integrations,
//!   templates, metric settings, sections, favorites run one stage after the
//!   other; see `src/apply/engine.rs`; two for templates when the plan
//!   replaces one: delete, then create), + 1 for the re-reads that confirm.
//!
//! The latency in the bound is the one injected. The sandbox answers a
//! little later than that (timer granularity, handling): [`service_time`]
//! measures how much, so the report can tell evalctl's overhead from the
//! sandbox's.

use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use evalctl::api::DEFAULT_PAGE_LIMIT;
use evalctl::client::{Client, ClientConfig, Credentials};
use evalctl::exit::ExitStatus;
use evalctl::sandbox::{Faults, Sandbox, SandboxHandle};
use futures::StreamExt;

use super::measure::{self, Invocation, Run, Stamped, Traffic};
use super::population::{self, Managed, Size, WorkDir};
use super::{Args, BenchError};

/// The longest chain of dependent requests of a phase, and how it adds up.
#[derive(Debug, Clone)]
pub struct Depth {
    /// Round trips.
    pub levels: usize,
    /// How they add up, for the report.
    pub why: String,
}

/// One measured run of evalctl.
#[derive(Debug, Clone)]
pub struct Phase {
    /// What it is, e.g. `plan from scratch`.
    pub name: String,
    /// The evalctl command line (without the binary's path).
    pub command: String,
    /// `--concurrency`.
    pub concurrency: u16,
    /// Wall time, peak RSS, exit status.
    pub run: Run,
    /// The exit status a correct run has.
    pub expected_exit: i32,
    /// The requests it sent.
    pub traffic: Traffic,
    /// Its dependency depth, when it talks to the service.
    pub depth: Option<Depth>,
    /// The sandbox's added latency.
    pub latency: Duration,
    /// The summary line of the plan it printed, when it printed one.
    pub summary: Option<Summary>,
}

/// The counts of a plan's summary line (`3 to create, 1 to update, ...`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Objects to create.
    pub create: usize,
    /// Objects to update.
    pub update: usize,
    /// Objects to replace.
    pub replace: usize,
    /// Objects to delete.
    pub delete: usize,
}

impl Summary {
    /// Every change.
    pub fn changes(&self) -> usize {
        self.create + self.update + self.replace + self.delete
    }

    /// The first summary in `text`, e.g. `Plan: 2 to create, 0 to update, 0
    /// to replace, 1 to delete.`
    pub fn find(text: &str) -> Option<Summary> {
        let line = text.lines().find(|l| l.contains(" to create, "))?;
        let mut s = Summary::default();
        for part in line.split(',') {
            let mut words = part
                .split_whitespace()
                .skip_while(|w| w.parse::<usize>().is_err());
            let n: usize = words.next()?.parse().ok()?;
            let field = match (words.next(), words.next()) {
                (Some("to"), Some(action)) => action.trim_end_matches(|c: char| !c.is_alphabetic()),
                _ => continue,
            };
            match field {
                "create" => s.create = n,
                "update" => s.update = n,
                "replace" => s.replace = n,
                "delete" => s.delete = n,
                _ => {}
            }
        }
        Some(s)
    }
}

impl Phase {
    /// `depth × latency + requests × latency / concurrency`.
    pub fn lower_bound(&self) -> Option<Duration> {
        let depth = self.depth.as_ref()?;
        let serial = self.latency * u32::try_from(depth.levels).unwrap_or(u32::MAX);
        let spread = self
            .latency
            .mul_f64(self.traffic.total as f64 / f64::from(self.concurrency.max(1)));
        Some(serial + spread)
    }

    /// Wall time over the lower bound.
    pub fn ratio(&self) -> Option<f64> {
        let bound = self.lower_bound()?;
        (!bound.is_zero()).then(|| self.run.wall.as_secs_f64() / bound.as_secs_f64())
    }

    /// Wall time over the lower bound computed with `service` (what a
    /// request really takes at the sandbox) instead of the injected latency:
    /// the part of the gap that is evalctl's own.
    pub fn ratio_at(&self, service: Duration) -> Option<f64> {
        let at = Phase {
            latency: service,
            ..self.clone()
        };
        at.ratio()
    }

    /// Whether it exited as a correct run does.
    pub fn exit_ok(&self) -> bool {
        self.run.exit == Some(self.expected_exit)
    }
}

/// The phases against the rate-limited sandbox.
#[derive(Debug, Clone)]
pub struct Throttled {
    /// Requests per second the sandbox allows.
    pub limit: f64,
    /// Plan from scratch.
    pub plan: Phase,
    /// When each request of the plan was answered.
    pub plan_timeline: Vec<Stamped>,
    /// Apply.
    pub apply: Phase,
    /// When each request of the apply was answered.
    pub apply_timeline: Vec<Stamped>,
}

/// Everything one run of the benchmark measured.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The population.
    pub size: Size,
    /// What the config repo manages.
    pub managed: Managed,
    /// Scorers in the catalog.
    pub scorers: usize,
    /// Changes of the plan from scratch.
    pub changes: usize,
    /// What one request takes at the sandbox, at the benchmark's concurrency.
    pub service_time: Duration,
    /// Objects changed out of band before the drift phase.
    pub drifted: usize,
    /// Changes the drift phase reported.
    pub drift_changes: Option<usize>,
    /// Plan from scratch at the default concurrency.
    pub plan: Phase,
    /// The same plan at concurrency 1.
    pub serial: Option<Phase>,
    /// Apply.
    pub apply: Phase,
    /// Plan when converged.
    pub converged: Phase,
    /// Drift after out-of-band changes.
    pub drift: Phase,
    /// `validate` of many files.
    pub validate: Phase,
    /// `validate` of hostile files, all refused.
    pub hostile: Phase,
    /// `validate` of a valid one-line 8 MiB flow list, accepted.
    pub long_line: Phase,
    /// `validate` of 100,000 references in one scalar, accepted.
    pub many_references: Phase,
    /// Plan and apply against a rate-limited sandbox.
    pub throttled: Option<Throttled>,
}

/// Pages of a listing of `n` items.
pub fn pages(n: usize) -> usize {
    let page = usize::try_from(DEFAULT_PAGE_LIMIT).unwrap_or(100).max(1);
    n.div_ceil(page).max(1)
}

/// The depth of loading live state and planning, from what was sent.
fn plan_depth(size: &Size, managed: &Managed, scorers: usize, traffic: &Traffic) -> Depth {
    let runs = managed.max_log_streams.max(managed.max_experiments);
    let fetch = pages(size.projects) + pages(runs) + 1;
    let catalog = pages(scorers) + usize::from(traffic.of("list_scorer_versions") > 0);
    let mut levels = fetch.max(catalog);
    let mut why = format!(
        "{} project page(s) + {} run search page(s) + 1 per-run read",
        pages(size.projects),
        pages(runs)
    );
    let radius = traffic.of("list_scorer_version_projects") > 0;
    let people = traffic.of("get_user") > 0;
    if radius || people {
        levels += 1;
        why.push_str(match (radius, people) {
            (true, true) => " + 1 blast radius and people lookup (at once)",
            (true, false) => " + 1 blast radius",
            _ => " + 1 people lookup",
        });
    }
    Depth { levels, why }
}

/// Round trips an apply needs after planning: one per apply stage that
/// wrote (two for templates when the plan replaces one), then one re-read.
fn apply_levels(traffic: &Traffic, summary: Option<Summary>) -> (usize, String) {
    let wrote = |names: &[&str]| names.iter().any(|n| traffic.of(n) > 0);
    let replaces = summary.is_some_and(|s| s.replace > 0);
    let stages = [
        ("integrations", wrote(&["put_integration"]), 1),
        (
            "templates",
            wrote(&[
                "create_annotation_template",
                "update_annotation_template",
                "delete_annotation_template",
                "create_feedback_template",
                "update_feedback_template",
                "delete_feedback_template",
            ]),
            if replaces { 2 } else { 1 },
        ),
        (
            "metric settings",
            wrote(&[
                "update_log_stream_metric_settings",
                "update_experiment_metric_settings",
            ]),
            1,
        ),
        (
            "sections",
            wrote(&[
                "create_trends_section",
                "update_trends_section",
                "delete_trends_section",
            ]),
            1,
        ),
        (
            "favorites",
            wrote(&["favorite_trends_dashboard", "unfavorite_trends_dashboard"]),
            1,
        ),
    ];
    let present: Vec<_> = stages.iter().filter(|(_, w, _)| *w).collect();
    let levels = present.iter().map(|(_, _, n)| n).sum::<usize>() + 1;
    let names: Vec<&str> = present.iter().map(|(name, _, _)| *name).collect();
    (
        levels,
        format!(
            "{} apply stage(s) ({}) + 1 re-read",
            present.len(),
            names.join(", ")
        ),
    )
}

/// The mean time of one request at the sandbox with `concurrency` of them
/// in flight: `samples` reads of metric settings through evalctl's client.
pub fn service_time(
    handle: &SandboxHandle,
    runs: &[(String, String)],
    concurrency: usize,
    samples: usize,
) -> Result<Duration, BenchError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::io("a tokio runtime", e))?;
    let mut config = ClientConfig::new(handle.base_url(), Credentials::api_key("demo-api-key"));
    config.concurrency = concurrency.max(1);
    let client = Client::new(config).map_err(|e| BenchError::Wrapper(e.to_string()))?;
    let times: Vec<Duration> = runtime.block_on(
        futures::stream::iter(runs.iter().cycle().take(samples))
            .map(|(project, run)| {
                let client = &client;
                async move {
                    let started = std::time::Instant::now();
                    let _ = client.get_log_stream_metric_settings(project, run).await;
                    started.elapsed()
                }
            })
            .buffer_unordered(concurrency.max(1))
            .collect(),
    );
    let n = u32::try_from(times.len()).unwrap_or(u32::MAX).max(1);
    Ok(times.iter().sum::<Duration>() / n)
}

struct Ctx<'a> {
    args: &'a Args,
    evalctl: &'a Path,
    work: &'a WorkDir,
    latency: Duration,
}

impl Ctx<'_> {
    /// Runs evalctl with `argv` against `handle` (or offline) and collects
    /// the phase's requests; with `poll`, also stamps them as they come.
    fn phase(
        &self,
        name: &str,
        log: &str,
        argv: &[&str],
        expected_exit: i32,
        handle: Option<&SandboxHandle>,
        poll: bool,
    ) -> Result<(Phase, Vec<Stamped>), BenchError> {
        let concurrency = argv
            .iter()
            .position(|a| *a == "--concurrency")
            .and_then(|i| argv.get(i + 1))
            .and_then(|c| c.parse().ok())
            .unwrap_or(1);
        if let Some(h) = handle {
            h.clear_log();
        }
        let inv = Invocation {
            evalctl: self.evalctl,
            args: argv.iter().map(OsString::from).collect(),
            base_url: handle.map(SandboxHandle::base_url),
            log_stem: self.work.logs().join(log),
        };
        eprintln!("running: evalctl {}", argv.join(" "));
        let stop = AtomicBool::new(false);
        let (run, timeline) = match handle {
            Some(h) if poll => std::thread::scope(|s| {
                let poller = s.spawn(|| measure::poll_log(h, Duration::from_millis(50), &stop));
                let run = measure::run(&inv);
                stop.store(true, Ordering::SeqCst);
                let timeline = poller.join().unwrap_or_default();
                run.map(|r| (r, timeline))
            })?,
            _ => (measure::run(&inv)?, Vec::new()),
        };
        let traffic = handle
            .map(|h| measure::traffic(&h.requests()))
            .unwrap_or_default();
        let summary = std::fs::read_to_string(self.work.logs().join(log).with_extension("out"))
            .ok()
            .and_then(|text| Summary::find(&text));
        let phase = Phase {
            name: name.to_owned(),
            command: format!("evalctl {}", argv.join(" ")),
            concurrency,
            run,
            expected_exit,
            traffic,
            depth: None,
            latency: self.latency,
            summary,
        };
        if !phase.exit_ok() {
            eprintln!(
                "warning: {name} exited {:?}, expected {expected_exit}: see {}.err",
                run.exit,
                self.work.logs().join(log).display()
            );
        }
        Ok((phase, timeline))
    }
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// Runs every phase once.
pub fn run_suite(args: &Args, evalctl: &Path, work: &WorkDir) -> Result<Suite, BenchError> {
    let latency = Duration::from_millis(args.latency_ms);
    let ctx = Ctx {
        args,
        evalctl,
        work,
        latency,
    };
    let size = Size {
        projects: args.projects,
        log_streams: args.log_streams,
        experiments: args.experiments,
    };
    let fixture = size.fixture();
    let config = path_str(&work.config());
    let managed = population::write_config_repo(fixture.state(), &work.config(), args.seed)
        .map_err(|e| BenchError::io(work.config(), e))?;
    population::write_validate_repo(fixture.state(), &work.validate(), args.validate_files)
        .map_err(|e| BenchError::io(work.validate(), e))?;
    population::write_hostile_repo(&work.hostile())
        .map_err(|e| BenchError::io(work.hostile(), e))?;
    let long_line = population::write_long_line(&work.long_line())
        .map_err(|e| BenchError::io(work.long_line(), e))?;
    let many_references = population::write_many_references(&work.many_references())
        .map_err(|e| BenchError::io(work.many_references(), e))?;
    let scorers = fixture.state().scorers.len();
    let runs: Vec<(String, String)> = fixture
        .state()
        .log_streams
        .iter()
        .take(400)
        .map(|l| (l.project_id.clone(), l.id.clone()))
        .collect();
    let faults = Faults {
        latency,
        seed: args.seed,
        ..Faults::none()
    };
    let handle = Sandbox::builder()
        .fixture(fixture)
        .faults(faults.clone())
        .start()?;
    let conc = args.concurrency().to_string();
    eprintln!("measuring the sandbox's service time");
    let service_time = service_time(&handle, &runs, usize::from(args.concurrency()), 400)?;

    let (mut plan, _) = ctx.phase(
        "plan from scratch",
        "plan",
        &[
            "plan",
            &config,
            "--detailed-exitcode",
            "--concurrency",
            &conc,
        ],
        2,
        Some(&handle),
        false,
    )?;
    plan.depth = Some(plan_depth(&size, &managed, scorers, &plan.traffic));
    let changes = plan.summary.map_or(0, |s| s.changes());

    let serial = if ctx.args.skip_serial {
        None
    } else {
        let (mut serial, _) = ctx.phase(
            "plan from scratch, concurrency 1",
            "plan-serial",
            &["plan", &config, "--detailed-exitcode", "--concurrency", "1"],
            2,
            Some(&handle),
            false,
        )?;
        serial.depth = Some(plan_depth(&size, &managed, scorers, &serial.traffic));
        Some(serial)
    };

    let (mut apply, _) = ctx.phase(
        "apply",
        "apply",
        &["apply", &config, "--auto-approve", "--concurrency", &conc],
        0,
        Some(&handle),
        false,
    )?;
    let mut depth = plan_depth(&size, &managed, scorers, &apply.traffic);
    let (levels, why) = apply_levels(&apply.traffic, apply.summary);
    depth.levels += levels;
    depth.why = format!("{} + {why}", depth.why);
    apply.depth = Some(depth);

    let (mut converged, _) = ctx.phase(
        "plan when converged",
        "plan-converged",
        &[
            "plan",
            &config,
            "--detailed-exitcode",
            "--concurrency",
            &conc,
        ],
        0,
        Some(&handle),
        false,
    )?;
    converged.depth = Some(plan_depth(&size, &managed, scorers, &converged.traffic));

    let drifted = handle.with_state(population::drift)?;
    let (mut drift, _) = ctx.phase(
        "drift",
        "drift",
        &["drift", &config, "--concurrency", &conc],
        2,
        Some(&handle),
        false,
    )?;
    drift.depth = Some(plan_depth(&size, &managed, scorers, &drift.traffic));
    let drift_changes = drift.summary.map(|s| s.changes());
    drop(handle);

    let validate_dir = path_str(&work.validate());
    let (validate, _) = ctx.phase(
        "validate",
        "validate",
        &["validate", &validate_dir],
        0,
        None,
        false,
    )?;
    let hostile_dir = path_str(&work.hostile());
    let (hostile, _) = ctx.phase(
        "hostile",
        "hostile",
        &["validate", &hostile_dir],
        i32::from(ExitStatus::InvalidManifests.code()),
        None,
        false,
    )?;
    let (long_line, _) = ctx.phase(
        "hostile: one-line 8 MiB flow list",
        "long-line",
        &["validate", &path_str(&long_line)],
        0,
        None,
        false,
    )?;
    let (many_references, _) = ctx.phase(
        "hostile: 100,000 references in one scalar",
        "many-references",
        &["validate", &path_str(&many_references)],
        0,
        None,
        false,
    )?;

    let throttled = if ctx.args.skip_throttle {
        None
    } else {
        Some(throttled(&ctx, &faults)?)
    };

    Ok(Suite {
        size,
        managed,
        scorers,
        changes,
        service_time,
        drifted,
        drift_changes,
        plan,
        serial,
        apply,
        converged,
        drift,
        validate,
        hostile,
        long_line,
        many_references,
        throttled,
    })
}

/// Plan and apply against a sandbox limiting the request rate.
fn throttled(ctx: &Ctx<'_>, faults: &Faults) -> Result<Throttled, BenchError> {
    let args = ctx.args;
    let size = Size {
        projects: args.throttle_projects,
        log_streams: args.log_streams,
        experiments: args.experiments,
    };
    let dir = ctx.work.throttled_config();
    let fixture = size.fixture();
    population::write_config_repo(fixture.state(), &dir, args.seed)
        .map_err(|e| BenchError::io(&dir, e))?;
    let handle = Sandbox::builder()
        .fixture(fixture)
        .faults(Faults {
            rate_limit: Some(args.rate_limit),
            ..faults.clone()
        })
        .start()?;
    let config = path_str(&dir);
    let conc = args.concurrency().to_string();
    let (plan, plan_timeline) = ctx.phase(
        "throttled plan",
        "throttled-plan",
        &[
            "plan",
            &config,
            "--detailed-exitcode",
            "--concurrency",
            &conc,
        ],
        2,
        Some(&handle),
        true,
    )?;
    let (apply, apply_timeline) = ctx.phase(
        "throttled apply",
        "throttled-apply",
        &["apply", &config, "--auto-approve", "--concurrency", &conc],
        0,
        Some(&handle),
        true,
    )?;
    Ok(Throttled {
        limit: args.rate_limit,
        plan,
        plan_timeline,
        apply,
        apply_timeline,
    })
}

/// `--serve`: the population and its config repo, served until killed.
pub fn serve(args: &Args) -> Result<(), BenchError> {
    let work = WorkDir {
        root: args.work_dir.clone(),
    };
    let size = Size {
        projects: args.projects,
        log_streams: args.log_streams,
        experiments: args.experiments,
    };
    let fixture = size.fixture();
    population::write_config_repo(fixture.state(), &work.config(), args.seed)
        .map_err(|e| BenchError::io(work.config(), e))?;
    let handle = Sandbox::builder()
        .fixture(fixture)
        .faults(Faults {
            latency: Duration::from_millis(args.latency_ms),
            seed: args.seed,
            ..Faults::none()
        })
        .start()?;
    println!(
        "serving {} log streams with {} ms of latency; the config repo is {}\n\n  export EVALCTL_BASE_URL={} EVALCTL_API_KEY=demo-api-key\n  target/release/evalctl plan {}\n\nCtrl-C stops it (state is not kept).",
        args.projects * args.log_streams,
        args.latency_ms,
        work.config().display(),
        handle.base_url(),
        work.config().display()
    );
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_parse_from_plan_and_drift_output() {
        let plan = "…\nPlan: 2100 to create, 3050 to update, 1 to replace, 0 to delete.\n";
        assert_eq!(
            Summary::find(plan),
            Some(Summary {
                create: 2100,
                update: 3050,
                replace: 1,
                delete: 0
            })
        );
        let drift =
            "To reconcile: 0 to create, 60 to update, 0 to replace, 0 to delete (evalctl apply).";
        assert_eq!(Summary::find(drift).map(|s| s.changes()), Some(60));
        assert_eq!(
            Summary::find("No changes. Live state matches the manifests."),
            None
        );
        assert_eq!(pages(0), 1);
        assert_eq!(pages(100), 1);
        assert_eq!(pages(101), 2);
    }
}

//! Unclear answers are settled within the apply (issue 10 §2 and §3):
//!
//! - a write that the service applied but answered with a 5xx (PUT of a
//!   section, PATCH of a template), after the client's retries, is settled
//!   by reading the object back: the apply succeeds, saying so;
//! - a create or an idempotent write whose answer was lost before the
//!   service processed it is sent again within the same apply when a read
//!   shows it did not land, so one apply converges;
//! - the same for widgets: creates at the top level, in an existing section
//!   and in a section the same apply creates, and an update, under 5xx and
//!   dropped connections before and after processing, converge with one
//!   widget of each name per place.

use crate::e2e_support;

use e2e_support::{TestContext, report};
use evalctl::plan::{ApplyReport, OutcomeStatus};
use evalctl::sandbox::{Fault, Faults};

/// A rename of `Latency` (an update by id), a criteria change of the
/// fixture's `star-annotation` template (a PATCH by id), and four new
/// sections on `staging`.
const REPO: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    trends:
      sections:
        - {name: Latency and cost, renamed_from: [Latency]}
  - name: staging
    trends:
      sections:
        - {name: S1, color: "#000001"}
        - {name: S2, color: "#000002"}
        - {name: S3, color: "#000003"}
        - {name: S4, color: "#000004"}
annotation_templates:
  - name: star-annotation
    criteria: Stars, reworded for the settle test.
    constraints: {annotation_type: star}
"##;

fn context() -> TestContext {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx
}

fn details(report: &ApplyReport) -> String {
    report
        .outcomes
        .iter()
        .map(|o| {
            format!(
                "{} {:?}: {}",
                o.address,
                o.status,
                o.detail.as_deref().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// After the run: faults off, the plan is empty and `staging` holds each
/// declared section once.
fn converged(ctx: &TestContext) {
    ctx.faults(Faults::none());
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    let mut names: Vec<String> = ctx
        .demo_dashboard("staging")
        .dashboard
        .sections
        .into_iter()
        .map(|s| s.name)
        .collect();
    names.sort();
    assert_eq!(names, ["S1", "S2", "S3", "S4"]);
}

#[test]
fn a_5xx_after_an_applied_update_is_settled_by_reading_it_back() {
    let ctx = context();
    // Every PUT/PATCH/DELETE by id is applied, then answered 502/503/504,
    // and so are the client's retries of it: the write is applied, the
    // answer says it failed. Reads (other paths) are unharmed.
    ctx.faults(Faults {
        fail_after_rate: 1.0,
        seed: 3,
        path_contains: Some("/trends/sections/".into()),
        ..Faults::none()
    });
    let first = ctx.evalctl(&[
        "apply",
        "repo",
        "--auto-approve",
        "-o",
        "json",
        "--max-retries",
        "1",
    ]);
    let r = report(&first);
    assert_eq!(first.status, 0, "{}\n{}", details(&r), first.stderr);
    let rename = r
        .outcomes
        .iter()
        .find(|o| o.address.to_string().contains("Latency and cost"))
        .expect("the rename");
    assert_eq!(rename.status, OutcomeStatus::Succeeded);
    let detail = rename.detail.as_deref().unwrap_or_default();
    assert!(detail.contains("a re-read shows it applied"), "{detail}");
    let hits = ctx
        .sandbox
        .requests()
        .iter()
        .filter(|r| matches!(r.fault, Some(Fault::FailAfter(_))))
        .count();
    assert!(hits > 0, "the fault never hit");
    converged(&ctx);

    // The same for a template PATCH.
    let ctx = context();
    ctx.faults(Faults {
        fail_after_rate: 1.0,
        seed: 4,
        path_contains: Some("/annotation/templates/".into()),
        ..Faults::none()
    });
    let first = ctx.evalctl(&[
        "apply",
        "repo",
        "--auto-approve",
        "-o",
        "json",
        "--max-retries",
        "1",
    ]);
    let r = report(&first);
    assert_eq!(first.status, 0, "{}\n{}", details(&r), first.stderr);
    assert!(
        details(&r).contains("a re-read shows it applied"),
        "{}",
        details(&r)
    );
    converged(&ctx);
}

#[test]
fn lost_answers_before_processing_are_sent_again_within_one_apply() {
    // A third of the section creates and updates fail before the service
    // processes them (one attempt each: --max-retries 1); each is read back,
    // found missing, and sent again, so the first apply converges.
    let mut resent = 0;
    let mut complete = 0;
    let seeds = 11..15;
    for seed in seeds.clone() {
        let ctx = context();
        ctx.faults(Faults {
            fail_rate: 0.25,
            drop_rate: 0.1,
            seed,
            path_contains: Some("/trends/sections".into()),
            ..Faults::none()
        });
        let first = ctx.evalctl(&[
            "apply",
            "repo",
            "--auto-approve",
            "-o",
            "json",
            "--max-retries",
            "1",
        ]);
        let r = report(&first);
        let text = details(&r);
        // Exit 3 only when some write failed every time it was sent.
        match first.status {
            0 => complete += 1,
            3 => assert!(
                text.contains("5 time(s)") || text.contains("sent 3 time(s)"),
                "seed {seed}\n{text}\n{}",
                first.stderr
            ),
            other => panic!("seed {seed}: exit {other}\n{text}\n{}", first.stderr),
        }
        resent += text.matches("so it was sent again").count();
        if first.status == 3 {
            ctx.faults(Faults::none());
            ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
        }
        converged(&ctx);
    }
    assert!(
        resent > 0,
        "no write was sent again: the test proves nothing"
    );
    assert!(
        complete * 4 >= seeds.count() * 3,
        "only {complete} first applies converged"
    );
}

/// Widgets created at the top level, in the fixture's `Quality` section and
/// in a new section (placed by its name), and one updated (`Correctness`,
/// a bar chart in the fixture).
const WIDGETS: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    trends:
      widgets:
        - {name: Traces, type: number, metric: num_traces, aggregation: Count}
        - {name: Errors, type: table, metric: error_count, aggregation: Sum}
        - {name: Tokens, type: line_chart, metric: total_tokens, aggregation: Sum}
      sections:
        - name: Quality
          widgets:
            - {name: Correctness, type: line_chart, metric: correctness, aggregation: Count}
            - {name: Adherence, type: number, metric: context_adherence, aggregation: PercentageTrue}
        - name: Spend
          widgets:
            - {name: Cost, type: number, metric: cost_usd, aggregation: Average}
            - {name: Latency p95, type: line_chart, metric: latency_ms, aggregation: P95}
"##;

/// The widget names of each place of production's dashboard, sorted.
fn widget_places(ctx: &TestContext) -> Vec<(String, Vec<String>)> {
    let d = ctx.demo_dashboard("production").dashboard;
    let names = |ws: &[evalctl::api::Widget]| {
        let mut n: Vec<String> = ws.iter().map(|w| w.name.clone()).collect();
        n.sort();
        n
    };
    let mut places = vec![("(top)".to_owned(), names(&d.widgets))];
    places.extend(
        d.sections
            .iter()
            .map(|s| (s.name.clone(), names(&s.widgets))),
    );
    places
}

#[test]
fn widget_writes_under_faults_settle_and_converge_without_duplicates() {
    // Widget creates and updates fail before or after the service processed
    // them (one attempt each: --max-retries 1): each is settled by reading
    // the dashboard, sent again only when it did not land.
    let (mut settled, mut complete) = (0, 0);
    let seeds = 21..25;
    for seed in seeds.clone() {
        let ctx = TestContext::new();
        ctx.write("repo/project.yaml", WIDGETS);
        ctx.faults(Faults {
            fail_rate: 0.1,
            fail_after_rate: 0.2,
            drop_rate: 0.05,
            drop_after_rate: 0.1,
            seed,
            path_contains: Some("/trends/widgets".into()),
            ..Faults::none()
        });
        let first = ctx.evalctl(&[
            "apply",
            "repo",
            "--auto-approve",
            "-o",
            "json",
            "--max-retries",
            "1",
        ]);
        let r = report(&first);
        let text = details(&r);
        match first.status {
            0 => complete += 1,
            3 => assert!(
                text.contains("time(s)"),
                "seed {seed}: a failure that was not retried after reading\n{text}\n{}",
                first.stderr
            ),
            other => panic!("seed {seed}: exit {other}\n{text}\n{}", first.stderr),
        }
        settled += text.matches("a re-read").count();
        ctx.faults(Faults::none());
        if first.status == 3 {
            ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
        }
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
        let places = widget_places(&ctx);
        let has = |place: &str, want: &[&str]| {
            let found = places
                .iter()
                .filter(|(p, _)| p == place)
                .map(|(_, names)| names.clone())
                .collect::<Vec<_>>();
            assert_eq!(found.len(), 1, "seed {seed}: sections {places:?}");
            for w in want {
                let n = found[0].iter().filter(|n| n == w).count();
                assert_eq!(n, 1, "seed {seed}: `{w}` {n} times in {place}: {places:?}");
            }
        };
        has("(top)", &["Traces", "Errors", "Tokens"]);
        has("Quality", &["Correctness", "Adherence"]);
        has("Spend", &["Cost", "Latency p95"]);
    }
    assert!(settled > 0, "no write was settled: the test proves nothing");
    assert!(
        complete * 4 >= seeds.count() * 3,
        "only {complete} first applies converged"
    );
}

/// `--max-retries` bounds every send of a failing idempotent write: the client's retries
/// and the re-sends that settle an unclear answer share it, so a write is sent at most
/// `--max-retries` + 1 times, and the report says how many.
#[test]
fn max_retries_bounds_every_send_of_a_failing_write() {
    for retries in [0_usize, 2] {
        let ctx = context();
        // Every PATCH of a template fails before it is processed: nothing ever lands.
        ctx.faults(Faults {
            fail_rate: 1.0,
            seed: 5,
            path_contains: Some("/annotation/templates/".into()),
            ..Faults::none()
        });
        let run = ctx.evalctl(&[
            "apply",
            "repo",
            "--auto-approve",
            "-o",
            "json",
            "--max-retries",
            &retries.to_string(),
        ]);
        let r = report(&run);
        assert_ne!(run.status, 0, "{}", details(&r));
        let patches = ctx
            .sandbox
            .requests()
            .iter()
            .filter(|r| r.method == "PATCH" && r.path.contains("/annotation/templates/"))
            .count();
        assert_eq!(
            patches,
            retries + 1,
            "--max-retries {retries}\n{}",
            details(&r)
        );
        let template = r
            .outcomes
            .iter()
            .find(|o| o.address.to_string().contains("star-annotation"))
            .expect("the template");
        assert_eq!(template.status, OutcomeStatus::Failed);
        let detail = template.detail.as_deref().unwrap_or_default();
        assert!(
            detail.contains(&format!("sent {} time(s)", retries + 1)),
            "{detail}"
        );
    }
}

/// Metric settings of a log stream and of an experiment that the fixture does not hold.
const METRIC_SETTINGS: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 3
        - name: output_toxicity
experiments:
  - name: baseline-eval
    metric_settings:
      scorers:
        - name: bleu
"##;

/// Issue 22 item 9: a metric-settings PATCH answered 500 without being applied (the
/// re-read shows the old settings) is as unclear as one answered 502, 503 or 504: it is
/// sent again within the whole `--max-retries` budget (it got 3 sends where a 502 got 5,
/// so a first apply that a 502 would have completed stopped at exit 3), and the report
/// says how often it was sent and that the re-read did not show it applied.
#[test]
fn a_500_on_a_patch_gets_the_whole_retry_budget_like_a_502() {
    for status in [500, 502] {
        let ctx = TestContext::new();
        ctx.write("repo/project.yaml", METRIC_SETTINGS);
        // Every metric-settings PATCH is answered `status` before the service
        // processes it; the GETs of the same paths (the re-reads) are unharmed.
        ctx.faults(Faults {
            fail_rate: 1.0,
            fail_statuses: vec![status],
            method: Some("PATCH".into()),
            path_contains: Some("/metric_settings".into()),
            seed: 30,
            ..Faults::none()
        });
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
        let r = report(&run);
        let text = details(&r);
        assert_eq!(run.status, 3, "{status}\n{text}\n{}", run.stderr);
        let log = ctx.sandbox.requests();
        for run_path in ["/log_streams/", "/experiments/"] {
            let on = |method: &str| {
                log.iter()
                    .filter(|r| {
                        r.method == method
                            && r.path.contains(run_path)
                            && r.path.ends_with("/metric_settings")
                    })
                    .count()
            };
            // --max-retries 4 (the default): five sends in all.
            assert_eq!(on("PATCH"), 5, "{status} {run_path}\n{text}");
            // Read before the plan, and again to settle the unclear answer.
            assert!(on("GET") >= 2, "{status} {run_path}: no re-read\n{text}");
        }
        assert!(
            log.iter()
                .filter(|r| r.method == "PATCH")
                .all(|r| r.status == Some(status)),
            "{status}"
        );
        for outcome in &r.outcomes {
            assert_eq!(outcome.status, OutcomeStatus::Failed, "{status}\n{text}");
            let detail = outcome.detail.as_deref().unwrap_or_default();
            assert!(
                detail.contains(&format!("server error {status}"))
                    && detail.contains("sent 5 time(s); a re-read after each unclear answer did not show it applied"),
                "{status}: {detail}"
            );
        }
    }
}

/// The same PATCHes answered 500 (without being applied) four times in ten: every first
/// apply converges, each change reported ✓ only once the service applied it.
#[test]
fn patches_answered_500_converge_in_one_apply() {
    let mut hit = 0;
    for seed in 31..35 {
        let ctx = TestContext::new();
        ctx.write("repo/project.yaml", METRIC_SETTINGS);
        ctx.faults(Faults {
            fail_rate: 0.4,
            fail_statuses: vec![500],
            method: Some("PATCH".into()),
            path_contains: Some("/metric_settings".into()),
            seed,
            ..Faults::none()
        });
        let first = ctx.evalctl(&[
            "apply",
            "repo",
            "--auto-approve",
            "-o",
            "json",
            "--max-retries",
            "8",
        ]);
        let r = report(&first);
        let text = details(&r);
        let failed = ctx
            .sandbox
            .requests()
            .iter()
            .filter(|r| r.fault == Some(Fault::FailBefore(500)))
            .count();
        hit += failed;
        assert_eq!(
            first.status, 0,
            "seed {seed}: {failed} PATCH(es) answered 500\n{text}\n{}",
            first.stderr
        );
        assert!(
            r.outcomes
                .iter()
                .all(|o| o.status == OutcomeStatus::Succeeded),
            "seed {seed}\n{text}"
        );
        ctx.faults(Faults::none());
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
    assert!(
        hit > 0,
        "no PATCH was answered 500: the test proves nothing"
    );
}

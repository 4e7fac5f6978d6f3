//! Two applies at once (issue 10 §1): two CI pipelines applying the same
//! config repo at the same moment must leave exactly one object of each
//! declared name, and both must say honestly what they did.
//!
//! Each round starts a fresh sandbox (the demo fixture, 30 ms a request),
//! runs two `evalctl apply examples/full` (or two `apply --plan` of one
//! saved plan) at the same instant, and then checks: both exited 0 with a
//! complete report, no section or template name occurs twice, and `drift`
//! exits 0. `APPLY_RACE_ROUNDS` sets the number of rounds (default 20).
//!
//! The same with widgets (at the top level, in an existing section and in a
//! section the same apply creates, placed by its name): no widget name twice
//! in one place; and with a dashboard both applies create (a copy) with its
//! contents: one dashboard of that name, nothing twice in it
//! (`APPLY_RACE_ROUNDS`/2 rounds each).
//!
//! Also here: a duplicate made out of band (someone clicked twice), of a
//! section, a widget or a dashboard, is drift (`drift` exits 2, `plan` deletes the
//! copy that is not the keeper) and `apply` resolves it, keeping the first.

use crate::e2e_support;

use std::collections::BTreeMap;
use std::time::Duration;

use e2e_support::{Run, TestContext};
use evalctl::api::{
    SectionCreateRequest, TrendsDashboard, TrendsDashboardDuplicateRequest, WidgetCreateRequest,
};
use evalctl::plan::ApplyReport;
use evalctl::sandbox::Faults;

/// The longest one run of the binary may take.
const LIMIT: Duration = Duration::from_secs(120);

fn rounds() -> usize {
    std::env::var("APPLY_RACE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

/// A fresh sandbox, 30 ms a request, with `examples/full` copied in as `full`.
fn race_context() -> TestContext {
    let ctx = TestContext::new()
        .env("OPENAI_API_KEY", "sk-race-openai-0123456789")
        .env("ANTHROPIC_API_KEY", "sk-ant-race-0123456789");
    ctx.copy_dir("examples/full", "full");
    ctx.faults(Faults {
        latency: Duration::from_millis(30),
        ..Faults::none()
    });
    ctx
}

/// Runs `a` and `b` (argument lists) at the same instant.
fn at_once(ctx: &TestContext, a: &[&str], b: &[&str]) -> (Run, Run) {
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            barrier.wait();
            ctx.evalctl_bounded(&[], a, LIMIT)
        });
        let second = s.spawn(|| {
            barrier.wait();
            ctx.evalctl_bounded(&[], b, LIMIT)
        });
        (
            first.join().expect("the first apply"),
            second.join().expect("the second apply"),
        )
    })
}

/// Names that occur more than once among the sections of each dashboard of
/// `demo-project`'s log streams, among its templates of each kind and among
/// the custom scorers; and examples/full's scorers at a version other than 1.
fn duplicates(ctx: &TestContext) -> Vec<String> {
    let project_id = ctx.demo_project_id();
    let client = ctx.client();
    ctx.block_on(async {
        let mut names: Vec<(String, String)> = Vec::new();
        for stream in ["production", "staging", "canary"] {
            let Some(ls) = client
                .find_log_stream_by_name(&project_id, stream)
                .await
                .expect("read")
            else {
                continue;
            };
            if let Some(d) = client
                .get_dashboard(&project_id, &ls.id, None)
                .await
                .expect("read")
            {
                names.extend(
                    d.sections
                        .into_iter()
                        .map(|s| (format!("section of {stream}"), s.name)),
                );
            }
        }
        let annotation = client
            .list_annotation_templates(&project_id)
            .await
            .expect("read");
        names.extend(
            annotation
                .into_iter()
                .map(|t| ("annotation template".to_owned(), t.name)),
        );
        let feedback = client
            .list_feedback_templates(&project_id)
            .await
            .expect("read");
        names.extend(
            feedback
                .into_iter()
                .map(|t| ("feedback template".to_owned(), t.name)),
        );
        // examples/full's custom scorers: one of each, with one version.
        let scorers = client.list_custom_scorers().await.expect("read");
        let mut versions = Vec::new();
        for s in scorers {
            let n = s.latest_version.as_ref().map_or(0, |v| v.version);
            if ["support-politeness", "answer-length"].contains(&s.name.as_str()) && n != 1 {
                versions.push(format!("custom scorer `{}` at version {n}, not 1", s.name));
            }
            names.push(("custom scorer".to_owned(), s.name));
        }
        let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
        for n in names {
            *counts.entry(n).or_default() += 1;
        }
        counts
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|((what, name), n)| format!("{what} `{name}` {n} times"))
            .chain(versions)
            .collect()
    })
}

/// The JSON report of an apply that exited 0 or 3, checked for honesty:
/// exit 0 exactly when it says complete.
#[track_caller]
fn honest_report(run: &Run) -> ApplyReport {
    assert!(
        run.status == 0 || run.status == 3,
        "exit {}\n{}",
        run.status,
        run.all_output()
    );
    let report: ApplyReport = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON report ({e})\n{}", run.all_output()));
    assert_eq!(
        run.status == 0,
        report.is_complete(),
        "the exit status and the report disagree\n{}",
        run.all_output()
    );
    report
}

/// How many creates of a report deleted their own copy because another run
/// made the same name at the same time, and how many found the name made.
fn races_resolved(report: &ApplyReport) -> (usize, usize) {
    let detail = |o: &&evalctl::plan::ChangeOutcome| o.detail.clone().unwrap_or_default();
    let deleted = report
        .outcomes
        .iter()
        .filter(|o| detail(o).contains("deleted its own"))
        .count();
    let found = report
        .outcomes
        .iter()
        .filter(|o| {
            let d = detail(o);
            d.contains("exists already") || d.contains("another run created it")
        })
        .count();
    (deleted, found)
}

#[allow(
    clippy::print_stderr,
    reason = "the figures of the race, shown with --nocapture and on failure"
)]
fn show(text: &str) {
    eprintln!("{text}");
}

/// Checks a round: both applies complete, no name twice, drift clean.
#[track_caller]
fn check_round(ctx: &TestContext, round: usize, a: &Run, b: &Run) -> (usize, usize) {
    let (ra, rb) = (honest_report(a), honest_report(b));
    let both = format!(
        "round {round}\n--- first\n{}\n--- second\n{}",
        a.all_output(),
        b.all_output()
    );
    assert_eq!((a.status, b.status), (0, 0), "{both}");
    let left = duplicates(ctx);
    assert!(left.is_empty(), "duplicates left: {left:?}\n{both}");
    let drift = ctx.evalctl_bounded(&[], &["drift", "full"], LIMIT);
    assert_eq!(drift.status, 0, "{}\n{both}", drift.all_output());
    let (da, fa) = races_resolved(&ra);
    let (db, fb) = races_resolved(&rb);
    (da + db, fa + fb)
}

#[test]
fn two_applies_at_once_leave_one_of_each_name() {
    let apply = ["apply", "full", "--auto-approve", "-o", "json"];
    let (mut deleted, mut found) = (0, 0);
    let n = rounds();
    for round in 1..=n {
        let ctx = race_context();
        let (a, b) = at_once(&ctx, &apply, &apply);
        let (d, f) = check_round(&ctx, round, &a, &b);
        deleted += d;
        found += f;
    }
    show(&format!(
        "race (two applies at once, 30 ms a request): {n} rounds, {} applies, all exited 0; \
         a run deleted its own just-made copy {deleted} time(s), found the name already made {found} time(s); \
         duplicates left: 0",
        2 * n
    ));
}

#[test]
fn two_applies_of_one_saved_plan_at_once_leave_one_of_each_name() {
    let apply = [
        "apply",
        "--plan",
        "plan.json",
        "--auto-approve",
        "-o",
        "json",
    ];
    let (mut deleted, mut found) = (0, 0);
    let n = rounds();
    for round in 1..=n {
        let ctx = race_context();
        ctx.evalctl_bounded(&[], &["plan", "full", "--out", "plan.json"], LIMIT)
            .expect(0);
        let (a, b) = at_once(&ctx, &apply, &apply);
        let (d, f) = check_round(&ctx, round, &a, &b);
        deleted += d;
        found += f;
    }
    show(&format!(
        "race (two apply --plan of one saved plan at once, 30 ms a request): {n} rounds, {} applies, all exited 0; \
         a run deleted its own just-made copy {deleted} time(s), found the name already made {found} time(s); \
         duplicates left: 0",
        2 * n
    ));
}

const ONE_SECTION: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: staging
    trends:
      sections:
        - {name: Errors, description: Error rates, color: "#D62728"}
"##;

#[test]
fn a_duplicate_of_a_declared_name_is_drift_and_apply_keeps_the_first() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", ONE_SECTION);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    // Someone creates a second `Errors` section by hand.
    let (project_id, ls_id) = ctx.demo_ids("staging");
    let client = ctx.client();
    let copy_id = ctx.block_on(async {
        let body = SectionCreateRequest {
            name: "Errors".into(),
            description: Some("a copy".into()),
            color: None,
        };
        client
            .create_section(&project_id, &ls_id, None, &body)
            .await
            .expect("created")
            .id
    });
    assert_eq!(duplicates(&ctx).len(), 1);

    let drift = ctx.evalctl(&["drift", "repo"]);
    drift.expect(2);
    assert!(drift.stdout.contains("Errors"), "{}", drift.stdout);
    let plan = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    plan.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&plan.stdout).expect("a JSON plan");
    let changes = doc["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "{}", plan.stdout);
    assert_eq!(changes[0]["action"], "delete");
    assert_eq!(changes[0]["operations"][0]["section_id"], copy_id.as_str());

    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["drift", "repo"]).expect(0);
    let left = ctx.block_on(async {
        client
            .get_dashboard(&project_id, &ls_id, None)
            .await
            .expect("read")
            .expect("a dashboard")
            .sections
    });
    let errors: Vec<_> = left.iter().filter(|s| s.name == "Errors").collect();
    assert_eq!(errors.len(), 1);
    assert_ne!(errors[0].id, copy_id, "the first one is kept");
    assert_eq!(errors[0].description.as_deref(), Some("Error rates"));
}

/// Widgets at the top level and in sections, one section new: its widgets
/// are placed by the section's name.
const WIDGETS: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    trends:
      widgets:
        - {name: Traces, type: number, metric: num_traces, aggregation: Count}
        - {name: Errors, type: table, metric: error_count, aggregation: Sum}
      sections:
        - name: Quality
          widgets:
            - {name: Correctness, type: bar_chart, metric: correctness, aggregation: Count}
            - {name: Adherence, type: line_chart, metric: context_adherence, aggregation: PercentageTrue}
        - name: Spend
          color: "#2CA02C"
          widgets:
            - {name: Cost, type: number, metric: cost_usd, aggregation: Average}
            - {name: Latency p95, type: line_chart, metric: latency_ms, aggregation: P95}
"##;

/// The default dashboard of demo-project's production log stream.
fn production_dashboard(ctx: &TestContext) -> (String, String, TrendsDashboard) {
    let read = ctx.demo_dashboard("production");
    (read.project_id, read.log_stream_id, read.dashboard)
}

/// Names that occur more than once among the sections of the production
/// dashboard, and among the widgets of each of its places.
fn widget_duplicates(ctx: &TestContext) -> Vec<String> {
    let (_, _, d) = production_dashboard(ctx);
    let mut names: Vec<(String, String)> = d
        .sections
        .iter()
        .map(|s| ("section".to_owned(), s.name.clone()))
        .collect();
    names.extend(
        d.widgets
            .iter()
            .map(|w| ("top-level widget".to_owned(), w.name.clone())),
    );
    for s in &d.sections {
        names.extend(
            s.widgets
                .iter()
                .map(|w| (format!("widget of section {}", s.name), w.name.clone())),
        );
    }
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for n in names {
        *counts.entry(n).or_default() += 1;
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|((what, name), n)| format!("{what} `{name}` {n} times"))
        .collect()
}

#[test]
fn two_applies_of_widgets_at_once_leave_one_widget_of_each_name_per_place() {
    let apply = ["apply", "widgets", "--auto-approve", "-o", "json"];
    let (mut deleted, mut found) = (0, 0);
    let n = rounds().div_ceil(2);
    for round in 1..=n {
        let ctx = race_context();
        ctx.write("widgets/project.yaml", WIDGETS);
        let (a, b) = at_once(&ctx, &apply, &apply);
        let (ra, rb) = (honest_report(&a), honest_report(&b));
        let both = format!(
            "round {round}\n--- first\n{}\n--- second\n{}",
            a.all_output(),
            b.all_output()
        );
        assert_eq!((a.status, b.status), (0, 0), "{both}");
        let left = widget_duplicates(&ctx);
        assert!(left.is_empty(), "duplicates left: {left:?}\n{both}");
        let drift = ctx.evalctl_bounded(&[], &["drift", "widgets"], LIMIT);
        assert_eq!(drift.status, 0, "{}\n{both}", drift.all_output());
        for r in [&ra, &rb] {
            let (d, f) = races_resolved(r);
            deleted += d;
            found += f;
        }
    }
    show(&format!(
        "race (two applies of widgets at once, 30 ms a request): {n} rounds, {} applies, all exited 0; \
         a run deleted its own just-made copy {deleted} time(s), found the name already made {found} time(s); \
         duplicates left: 0",
        2 * n
    ));
}

#[test]
fn a_second_widget_of_a_declared_name_is_drift_and_apply_keeps_the_first() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", WIDGETS);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["drift", "repo"]).expect(0);
    // Someone adds a second top-level `Traces` widget by hand.
    let (project_id, ls_id, _) = production_dashboard(&ctx);
    let client = ctx.client();
    let body: WidgetCreateRequest = serde_json::from_value(serde_json::json!({
        "name": "Traces", "type": "line_chart", "metric": "num_traces", "aggregation": "Sum"
    }))
    .expect("a widget body");
    let copy_id = ctx.block_on(async {
        client
            .create_widget(&project_id, &ls_id, None, &body)
            .await
            .expect("created")
            .id
    });
    assert_eq!(widget_duplicates(&ctx).len(), 1);

    let drift = ctx.evalctl(&["drift", "repo"]);
    drift.expect(2);
    assert!(drift.stdout.contains("Traces"), "{}", drift.stdout);
    let plan = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    plan.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&plan.stdout).expect("a JSON plan");
    let changes = doc["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "{}", plan.stdout);
    assert_eq!(changes[0]["action"], "delete");
    assert_eq!(changes[0]["operations"][0]["widget"], copy_id.as_str());

    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["drift", "repo"]).expect(0);
    let (_, _, d) = production_dashboard(&ctx);
    let traces: Vec<_> = d.widgets.iter().filter(|w| w.name == "Traces").collect();
    assert_eq!(traces.len(), 1);
    assert_ne!(traces[0].id, copy_id, "the first one is kept");
    assert_eq!(traces[0].metric, "num_traces");
    assert_eq!(
        serde_json::to_value(&traces[0].widget_type).expect("a type"),
        "number"
    );
}

/// A dashboard the apply creates (a copy of the default one), with widgets
/// at its top level and in a section of its own.
const DASHBOARD: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    trends:
      dashboards:
        - name: Night watch
          interval_mins: 5
          widgets:
            - {name: Errors, type: table, metric: error_count, aggregation: Sum}
            - {name: Latency p99, type: line_chart, metric: latency_ms, aggregation: P99}
          sections:
            - name: Paging
              widgets:
                - {name: Pages, type: number, metric: pages, aggregation: Count}
"##;

/// The names of production's dashboards other than the default one, and
/// what occurs twice in each.
fn other_dashboards(ctx: &TestContext) -> (Vec<String>, Vec<String>) {
    let (project_id, ls_id) = ctx.demo_ids("production");
    let client = ctx.client();
    ctx.block_on(async {
        let mut names = Vec::new();
        let mut twice = Vec::new();
        for d in client
            .list_dashboards(&project_id, &ls_id)
            .await
            .expect("listed")
        {
            if d.is_default {
                continue;
            }
            names.push(d.name.clone());
            let full = client
                .get_dashboard(&project_id, &ls_id, Some(&d.id))
                .await
                .expect("read")
                .expect("a listed dashboard");
            let mut seen: BTreeMap<String, usize> = BTreeMap::new();
            for s in &full.sections {
                *seen.entry(format!("section {}", s.name)).or_default() += 1;
                for w in &s.widgets {
                    *seen
                        .entry(format!("widget {} of {}", w.name, s.name))
                        .or_default() += 1;
                }
            }
            for w in &full.widgets {
                *seen.entry(format!("widget {}", w.name)).or_default() += 1;
            }
            twice.extend(
                seen.into_iter()
                    .filter(|(_, n)| *n > 1)
                    .map(|(what, n)| format!("{}: {what} {n} times", d.name)),
            );
        }
        names.sort();
        (names, twice)
    })
}

#[test]
fn two_applies_creating_one_dashboard_at_once_leave_one_dashboard() {
    let apply = ["apply", "dash", "--auto-approve", "-o", "json"];
    let (mut deleted, mut found) = (0, 0);
    let n = rounds().div_ceil(2);
    for round in 1..=n {
        let ctx = race_context();
        ctx.write("dash/project.yaml", DASHBOARD);
        let (a, b) = at_once(&ctx, &apply, &apply);
        let (ra, rb) = (honest_report(&a), honest_report(&b));
        let both = format!(
            "round {round}\n--- first\n{}\n--- second\n{}",
            a.all_output(),
            b.all_output()
        );
        assert_eq!((a.status, b.status), (0, 0), "{both}");
        let (names, twice) = other_dashboards(&ctx);
        let copies = names.iter().filter(|n| *n == "Night watch").count();
        assert_eq!(copies, 1, "{names:?}\n{both}");
        assert!(twice.is_empty(), "duplicates left: {twice:?}\n{both}");
        let drift = ctx.evalctl_bounded(&[], &["drift", "dash"], LIMIT);
        assert_eq!(drift.status, 0, "{}\n{both}", drift.all_output());
        for r in [&ra, &rb] {
            let (d, f) = races_resolved(r);
            deleted += d;
            found += f;
        }
    }
    show(&format!(
        "race (two applies creating one dashboard at once, 30 ms a request): {n} rounds, {} applies, all exited 0; \
         a run deleted its own just-made copy {deleted} time(s), found the name already made {found} time(s); \
         duplicates left: 0",
        2 * n
    ));
}

#[test]
fn a_second_dashboard_of_a_declared_name_is_drift_and_apply_keeps_the_first() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", DASHBOARD);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["drift", "repo"]).expect(0);
    // Someone copies `Night watch` under the same name by hand.
    let (project_id, ls_id, _) = production_dashboard(&ctx);
    let client = ctx.client();
    let (first_id, copy_id) = ctx.block_on(async {
        let first = client
            .find_dashboards_by_name(&project_id, &ls_id, "Night watch")
            .await
            .expect("listed")
            .remove(0)
            .id;
        let body: TrendsDashboardDuplicateRequest =
            serde_json::from_value(serde_json::json!({"name": "Night watch"}))
                .expect("a duplicate body");
        let copy = client
            .duplicate_dashboard(&project_id, &ls_id, &first, &body)
            .await
            .expect("copied")
            .id;
        (first, copy)
    });
    assert_eq!(
        other_dashboards(&ctx).0,
        ["Night watch", "Night watch", "On-call"]
    );

    let drift = ctx.evalctl(&["drift", "repo"]);
    drift.expect(2);
    assert!(drift.stdout.contains("Night watch"), "{}", drift.stdout);
    let plan = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    plan.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&plan.stdout).expect("a JSON plan");
    let changes = doc["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "{}", plan.stdout);
    assert_eq!(changes[0]["action"], "delete");
    assert_eq!(
        changes[0]["operations"][0]["dashboard_id"],
        copy_id.as_str()
    );

    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["drift", "repo"]).expect(0);
    let left = ctx.block_on(async {
        client
            .find_dashboards_by_name(&project_id, &ls_id, "Night watch")
            .await
            .expect("listed")
    });
    let ids: Vec<&str> = left.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, [first_id.as_str()], "the first one is kept");
}

//! End to end: dashboards as code, down to the widget, through the real
//! binary against the sandbox. After apply, plan is empty; a widget changed
//! out of band is drift naming the widget and the field; a widget moved to
//! another section keeps its id; a dashboard created by copying is planned
//! and applied in one go, from the manifests and from a saved plan; a
//! visibility change replaces a dashboard; a named custom integration is
//! created once and then only noted.

use crate::e2e_support;

use e2e_support::TestContext;
use evalctl::api::{TrendsDashboard, WidgetUpdateRequest};

const GATEWAY_KEY: &str = "gateway-e2e-secret-0123456789";

fn context() -> TestContext {
    TestContext::new().env("EVAL_GATEWAY_KEY", GATEWAY_KEY)
}

const DASHBOARDS: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    trends:
      interval_mins: 30
      relative_time: last_14_days
      group_by: ""
      widgets:
        - {name: Traces, type: number, metric: num_traces, aggregation: Count}
      sections:
        - name: Quality
          widgets:
            - {name: Correctness, type: bar_chart, metric: correctness, aggregation: Count}
        - name: Latency
          widgets:
            - {name: Latency p95, type: line_chart, metric: latency_ms, aggregation: P95}
            # Lives in `Quality`: moved here, not made again.
            - {name: Context adherence, type: line_chart, metric: context_adherence, aggregation: PercentageTrue}
            - name: Cost per trace
              type: number
              metric: cost_usd
              aggregation: Average
              description: Spend
              dataset: [{metrics: [cost_usd]}]
      dashboards:
        - name: On-call
          interval_mins: 5
          widgets:
            - {name: Errors, type: table, metric: error_count, aggregation: Sum}
            - {name: Latency p99, type: line_chart, metric: latency_ms, aggregation: P99}
        - name: Triage
          visibility: user
          description: Mine
          relative_time: last_24_hours
          widgets: []
          sections:
            - name: Quality
              widgets:
                - {name: Correctness, type: number, metric: correctness, aggregation: Average}
            - name: Errors
              color: "#D62728"
              widgets:
                - {name: 5xx, type: line_chart, metric: status_5xx, aggregation: Sum}
---
kind: Integration
provider: custom
name: eval-gateway
endpoint: https://gateway.example.com/v1
authentication_type: api_key
api_key_header: X-API-Key
api_key_value: ${EVAL_GATEWAY_KEY}
"##;

/// The dashboards of demo-project's production log stream: the default one,
/// then the others, read as the demo user.
fn dashboards(ctx: &TestContext) -> Vec<TrendsDashboard> {
    let (project_id, ls_id) = ctx.demo_ids("production");
    let client = ctx.client();
    ctx.block_on(async {
        let mut out = Vec::new();
        let listed = client
            .list_dashboards(&project_id, &ls_id)
            .await
            .expect("the dashboards are listed");
        for d in listed {
            out.push(
                client
                    .get_dashboard(&project_id, &ls_id, Some(&d.id))
                    .await
                    .expect("a dashboard is read")
                    .expect("a listed dashboard exists"),
            );
        }
        out.sort_by_key(|d| !d.is_default);
        out
    })
}

fn widget_id(d: &TrendsDashboard, section: Option<&str>, name: &str) -> Option<String> {
    let widgets = match section {
        None => &d.widgets,
        Some(s) => &d.sections.iter().find(|x| x.name == s)?.widgets,
    };
    widgets
        .iter()
        .find(|w| w.name == name)
        .map(|w| w.id.clone())
}

#[test]
fn dashboards_apply_then_plan_empty_and_a_widget_changed_elsewhere_is_drift() {
    let ctx = context();
    ctx.write("repo/demo.yaml", DASHBOARDS);
    let before = dashboards(&ctx);
    let adherence = widget_id(&before[0], Some("Quality"), "Context adherence").unwrap();

    let planned = ctx.evalctl(&["plan", "repo"]);
    planned.expect(0);
    for line in [
        "~ project[demo-project].log_stream[production].trends.section[Latency].widget[Context adherence]",
        "moved from section `Quality`",
        "+ project[demo-project].log_stream[production].dashboard[Triage]",
        "+ custom_integration[eval-gateway]",
        "nor can it be deleted",
    ] {
        assert!(planned.stdout.contains(line), "{line}\n{}", planned.stdout);
    }
    assert!(!planned.all_output().contains(GATEWAY_KEY));

    let applied = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
    applied.expect(0);
    assert!(!applied.all_output().contains(GATEWAY_KEY));
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(0);
    assert!(plan.stdout.contains("No changes"), "{}", plan.stdout);

    let after = dashboards(&ctx);
    let default = &after[0];
    assert_eq!(
        widget_id(default, Some("Latency"), "Context adherence").as_deref(),
        Some(adherence.as_str()),
        "the move kept the widget"
    );
    assert_eq!(default.interval_mins, 30);
    assert_eq!(default.relative_time.as_deref(), Some("last_14_days"));
    let names: Vec<&str> = after.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["Default", "On-call", "Triage"]);
    let triage = &after[2];
    assert_eq!(triage.visibility, "user");
    // The copied top-level widget is not declared: deleted only with --prune.
    let top: Vec<&str> = triage.widgets.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(top, ["Traces"]);
    let sections: Vec<&str> = triage.sections.iter().map(|s| s.name.as_str()).collect();
    // Copied from the default (as it was), then made to match; `Latency`
    // was copied and is not declared: left as it is without --prune.
    assert_eq!(sections, ["Quality", "Latency", "Errors"]);
    let quality = &triage.sections[0];
    let widgets: Vec<(&str, &str)> = quality
        .widgets
        .iter()
        .map(|w| (w.name.as_str(), w.aggregation.as_str()))
        .collect();
    // Undeclared `Context adherence` was copied and stays (no --prune).
    assert_eq!(
        widgets,
        [
            ("Correctness", "Average"),
            ("Context adherence", "PercentageTrue")
        ]
    );

    // Someone changes a widget's metric in the UI: drift names it.
    let client = ctx.client();
    let correctness = widget_id(default, Some("Quality"), "Correctness").unwrap();
    ctx.block_on(async {
        client
            .update_widget(
                &default.project_id,
                &default.log_stream_id,
                &correctness,
                None,
                &WidgetUpdateRequest {
                    metric: Some("hallucination".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    });
    let drift = ctx.evalctl(&["drift", "repo"]);
    drift.expect(2);
    assert!(
        drift.stdout.contains(
            "project[demo-project].log_stream[production].trends.section[Quality].widget[Correctness]"
        ) && drift.stdout.contains("metric"),
        "{}",
        drift.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["drift", "repo"]).expect(0);

    // With --prune, what the written lists leave out goes.
    ctx.evalctl(&["apply", "repo", "--auto-approve", "--prune"])
        .expect(0);
    ctx.evalctl(&["plan", "repo", "--prune", "--detailed-exitcode"])
        .expect(0);
    let triage = dashboards(&ctx).pop().unwrap();
    assert_eq!(triage.name, "Triage");
    assert!(triage.widgets.is_empty());
    let sections: Vec<&str> = triage.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(sections, ["Quality", "Errors"]);
}

#[test]
fn a_saved_plan_creates_a_dashboard_and_its_contents_by_name() {
    let ctx = context();
    ctx.write("repo/demo.yaml", DASHBOARDS);
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let saved = std::fs::read_to_string(ctx.path("plan.json")).unwrap();
    assert!(saved.contains(r#""named":"Triage""#) || saved.contains(r#""named": "Triage""#));
    assert!(!saved.contains(GATEWAY_KEY));
    let run = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    run.expect(0);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_visibility_change_replaces_the_dashboard_keeping_its_contents() {
    let ctx = context();
    ctx.write("repo/demo.yaml", DASHBOARDS);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let first = dashboards(&ctx);
    let on_call = first.iter().find(|d| d.name == "On-call").unwrap().clone();
    ctx.write(
        "repo/demo.yaml",
        &DASHBOARDS.replace(
            "        - name: On-call\n",
            "        - name: On-call\n          visibility: user\n",
        ),
    );
    let planned = ctx.evalctl(&["plan", "repo"]);
    planned.expect(0);
    assert!(
        planned
            .stdout
            .contains("-/+ project[demo-project].log_stream[production].dashboard[On-call]"),
        "{}",
        planned.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    let replaced = dashboards(&ctx)
        .into_iter()
        .find(|d| d.name == "On-call")
        .unwrap();
    assert_ne!(replaced.id, on_call.id);
    assert_eq!(replaced.visibility, "user");
    let names =
        |d: &TrendsDashboard| -> Vec<String> { d.widgets.iter().map(|w| w.name.clone()).collect() };
    assert_eq!(names(&replaced), names(&on_call));
    assert_eq!(replaced.interval_mins, 5);
}

/// A dashboard at its cap of 50 sections: swapping one section for another (with
/// `--prune`) deletes the old one before creating the new one, so one apply completes.
/// The sections of a dashboard where widgets move are still deleted last (above).
#[test]
fn a_section_swapped_at_the_cap_of_fifty_is_deleted_first() {
    let ctx = context();
    let live: Vec<String> = ctx
        .demo_dashboard("production")
        .dashboard
        .sections
        .into_iter()
        .map(|s| s.name)
        .collect();
    let manifest = |extra: &[String]| {
        let mut text = String::from(
            "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections:\n",
        );
        for name in live.iter().chain(extra) {
            text.push_str(&format!("        - name: {name}\n"));
        }
        text
    };
    let fill: Vec<String> = (0..50 - live.len()).map(|i| format!("S{i}")).collect();
    ctx.write("repo/project.yaml", &manifest(&fill));
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(
        ctx.demo_dashboard("production").dashboard.sections.len(),
        50
    );

    let mut swapped = fill[1..].to_vec();
    swapped.push("T0".to_owned());
    ctx.write("repo/project.yaml", &manifest(&swapped));
    let run = ctx.evalctl(&["apply", "repo", "--prune", "--auto-approve"]);
    run.expect(0);
    assert!(
        run.stdout.contains("Apply: 2 succeeded, 0 failed"),
        "{}",
        run.stdout
    );
    ctx.evalctl(&["plan", "repo", "--prune", "--detailed-exitcode"])
        .expect(0);
}

/// A dashboard copied from one that does not exist is reported at its `copy_from`, in
/// text and as a GitHub annotation (it was reported at the document's first line).
#[test]
fn a_missing_copy_source_is_reported_at_copy_from() {
    let ctx = context();
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      dashboards:\n        - name: New\n          copy_from: Nope\n",
    );
    let run = ctx.evalctl(&["plan", "repo", "--github-annotations"]);
    run.expect(65);
    assert!(run.stderr.contains("project.yaml:8:22"), "{}", run.stderr);
    assert!(
        run.stderr.contains("line=8,col=22::dashboard `New`"),
        "{}",
        run.stderr
    );
}

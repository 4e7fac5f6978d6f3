//! End to end: the judge-call forecast. A pull request that changes metric
//! settings of the sandbox's demo log streams and an experiment, with a
//! `kind: Pricing` document, is planned by the real binary: the text plan
//! has a Forecast block, the markdown comment the headline line under its
//! summary and a table per project, `-o json` and the saved plan one
//! `forecast` object each, `drift` the same figures as live against
//! declared. The traffic comes with the run searches evalctl already makes
//! (no request of its own), and a plan that changes no metric settings
//! forecasts nothing.

use crate::e2e_support;

use e2e_support::TestContext;
use evalctl::sandbox::Fixture;
use serde_json::Value;

/// The PR: production gets a luna scorer and a trace scorer and its judges
/// are sampled at 10% (a rule for llm scorers); staging, declared at
/// 20,000 traces a day, gets a code scorer; candidate-eval swaps its code
/// scorer for an LLM judge.
const PROJECT: &str = "\
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
        - name: context_adherence
          scorer_version: 1
        - name: output_toxicity_luna
        - name: agent_flow
          num_judges: 1
      segment_filters:
        - sample_rate: 0.5
          filter: {name: node_name, operator: eq, value: llm}
        - sample_rate: 0.1
          llm_scorers: true
  - name: staging
    forecast: {traces_per_day: 20000}
    metric_settings:
      scorers:
        - name: response-length-check
experiments:
  - name: candidate-eval
    metric_settings:
      scorers:
        - name: helpfulness-judge
";

const PRICING: &str = "\
kind: Pricing
default: {per_1000_calls: 1.5}
models:
  gpt-4.1-mini: {per_1000_calls: 0.6}
";

fn context() -> TestContext {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", PROJECT);
    ctx.write("repo/pricing.yaml", PRICING);
    ctx
}

/// The text from the line starting with `from` on.
fn from<'t>(text: &'t str, from: &str) -> &'t str {
    let at = text
        .find(from)
        .unwrap_or_else(|| panic!("no `{from}` in:\n{text}"));
    &text[at..]
}

#[test]
fn a_text_plan_forecasts_judge_calls_from_the_sandbox_counts() {
    let ctx = context();
    let plan = ctx.evalctl(&["plan", "repo"]);
    plan.expect(0);
    let out = &plan.stdout;
    // production: 1,400 traces and 9,800 spans a day, as the sandbox counts
    // them. Judges before: correctness and context_adherence, 3 judges each,
    // on at most 50% of 9,800 spans (a filtered rule): ≤ 29,400. After: at
    // 10% (the llm_scorers rule, exact): 2 × 980 × 3 + agent_flow 140 × 1.
    assert!(
        out.contains("LLM-judge calls: ≤ 29,400 → 6,020 a day, -23,380 (≈ -$421 a month at the repo's prices)"),
        "{out}"
    );
    // Others: output_toxicity_luna at ≤ 50% of 9,800 spans, plus staging's
    // code scorer on 20,000 × 5 spans (5 spans a trace counted so far).
    assert!(
        out.contains("Other evaluations: 0 → ≤ 104,900 a day, +104,900"),
        "{out}"
    );
    assert!(
        out.contains("project[demo-project].log_stream[production]: 1,400 traces and 9,800 spans a day (counted over"),
        "{out}"
    );
    assert!(
        out.contains("project[demo-project].log_stream[staging]: 20,000 traces and 100,000 spans a day (declared in the manifest)"),
        "{out}"
    );
    // The experiment scores its records once.
    assert!(
        out.contains("LLM-judge calls of experiments: 0 → 285 once, +285"),
        "{out}"
    );
    // Each assumption once.
    let block = from(out, "Forecast (");
    assert_eq!(block.matches("A month is 30 days").count(), 1, "{block}");
    ctx.insta_settings().bind(|| {
        insta::assert_snapshot!("forecast_text", block);
    });
}

#[test]
fn the_pr_comment_has_the_line_under_its_summary_and_a_table_per_project() {
    let ctx = context();
    let plan = ctx.evalctl(&["plan", "repo", "-o", "markdown"]);
    plan.expect(0);
    let lines: Vec<&str> = plan.stdout.lines().collect();
    let summary = lines
        .iter()
        .position(|l| l.starts_with("**Plan:"))
        .expect("a summary");
    assert_eq!(
        lines[summary + 2],
        "LLM-judge calls: ≤ 29,400 → 6,020 a day, -23,380 (≈ -$421 a month at the repo's prices)"
    );
    let details = from(&plan.stdout, "<details><summary>Judge-call forecast");
    let details = &details[..details.find("</details>").expect("closed") + 10];
    ctx.insta_settings().bind(|| {
        insta::assert_snapshot!("forecast_markdown", details);
    });
}

#[test]
fn json_and_the_saved_plan_hold_one_versioned_forecast() {
    let ctx = context();
    let json = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    json.expect(0);
    let doc: Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    let forecast = &doc["forecast"];
    assert_eq!(forecast["format_version"], 1);
    assert_eq!(forecast["currency"], "USD");
    let totals = &forecast["totals"];
    assert_eq!(totals["llm_judge_calls_per_day"]["before"], 29_400);
    assert_eq!(totals["llm_judge_calls_per_day"]["after"], 6_020);
    assert_eq!(totals["other_evaluations_per_day"]["after"], 104_900);
    assert_eq!(totals["experiment_llm_judge_calls"]["after"], 285);
    assert_eq!(totals["cost_per_month"]["before"], 529.2);
    assert_eq!(totals["cost_per_month"]["after"], 108.36);
    let runs = forecast["runs"].as_array().expect("runs");
    let names: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| (r["run_kind"].as_str().unwrap(), r["run"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("log_stream", "production"),
            ("log_stream", "staging"),
            ("experiment", "candidate-eval")
        ]
    );
    assert_eq!(runs[0]["traffic"]["source"], "counted");
    assert_eq!(runs[0]["traffic"]["traces"], 1_400);
    assert_eq!(runs[0]["traffic"]["spans"], 9_800);
    assert_eq!(runs[1]["traffic"]["source"], "declared");
    assert_eq!(runs[2]["llm_judge_calls_per_run"]["after"], 285);

    // The saved plan is one document, with the same forecast.
    let saved = ctx.path("plan.json");
    let saved = saved.to_str().expect("a UTF-8 path");
    ctx.evalctl(&["plan", "repo", "--out", saved]).expect(0);
    let text = std::fs::read_to_string(saved).expect("the saved plan");
    let doc: Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(doc["plan"]["forecast"]["totals"], *totals);
    // Applying it keeps its forecast out of the way and converges.
    ctx.evalctl(&["apply", "--plan", saved, "--auto-approve"])
        .expect(0);
    let after = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    after.expect(0);
    let doc: Value = serde_json::from_str(&after.stdout).expect("one JSON document");
    assert!(doc.get("forecast").is_none(), "{}", after.stdout);
}

#[test]
fn drift_reports_the_forecast_of_live_against_declared() {
    let ctx = context();
    let drift = ctx.evalctl(&["drift", "repo"]);
    drift.expect(2);
    let out = &drift.stdout;
    assert!(
        out.contains("Forecast (live settings → declared settings):"),
        "{out}"
    );
    assert!(
        out.contains("LLM-judge calls: ≤ 29,400 live → 6,020 declared a day, -23,380 (≈ -$421 a month at the repo's prices)"),
        "{out}"
    );
}

#[test]
fn a_plan_that_changes_no_metric_settings_forecasts_nothing() {
    let ctx = TestContext::new();
    // A template and a dashboard section: no metric settings.
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections:\n        - name: Quality\n        - name: Costs\n",
    );
    ctx.write("repo/pricing.yaml", PRICING);
    for format in ["text", "markdown", "json"] {
        let plan = ctx.evalctl(&["plan", "repo", "-o", format]);
        plan.expect(0);
        assert!(plan.stdout.contains("Costs"), "{}", plan.stdout);
        for absent in ["Forecast", "forecast", "LLM-judge", "judge"] {
            assert!(
                !plan.stdout.contains(absent),
                "{format}: `{absent}` in\n{}",
                plan.stdout
            );
        }
    }
}

#[test]
fn the_counts_come_with_the_searches_evalctl_already_makes() {
    // Two projects of 30 log streams each, every one given a scorer.
    let ctx = TestContext::with_fixture(Fixture::scaled(2, 30, 0));
    for p in 0..2 {
        let mut text = format!("kind: Project\nname: bench-project-{p:03}\nlog_streams:\n");
        for l in 0..30 {
            text.push_str(&format!(
                "  - name: ls-{l:03}\n    metric_settings:\n      scorers:\n        - name: completeness\n"
            ));
        }
        ctx.write(&format!("repo/project-{p}.yaml"), &text);
    }
    let before = ctx.sandbox.requests().len();
    let json = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    json.expect(0);
    let requests: Vec<_> = ctx.sandbox.requests().into_iter().skip(before).collect();
    let doc: Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    let runs = doc["forecast"]["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 60);
    assert!(
        runs.iter().all(|r| r["traffic"]["source"] == "counted"),
        "every log stream's traffic was counted"
    );
    // The scaled fixture's ls-005 of project 000, created 5 hours after the
    // fixtures' epoch: 105 traces a day of 7 spans.
    let ls = runs
        .iter()
        .find(|r| r["project"] == "bench-project-000" && r["run"] == "ls-005")
        .expect("ls-005");
    assert_eq!(ls["traffic"]["traces"], 105);
    assert_eq!(ls["traffic"]["spans"], 735);
    // One log stream search per project (a page holds 30), no read of a
    // log stream of its own: the counts came with the searches.
    let searches = requests
        .iter()
        .filter(|r| r.path.ends_with("/log_streams/search"))
        .count();
    assert_eq!(searches, 2, "{requests:#?}");
    let single = requests
        .iter()
        .filter(|r| {
            r.method == "GET" && r.path.contains("/log_streams/") && !r.path.contains("metric")
        })
        .filter(|r| !r.path.contains("trends") && !r.path.contains("dashboard"))
        .count();
    assert_eq!(single, 0, "{requests:#?}");
    let settings = requests
        .iter()
        .filter(|r| r.method == "GET" && r.path.contains("metric_settings"))
        .count();
    assert_eq!(settings, 60, "one metric-settings read per log stream");
}

#[test]
fn pricing_documents_are_checked_like_every_manifest() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/pricing.yaml",
        "kind: Pricing\ndefault: {per_call: 0.1, per_1000_calls: 2}\n",
    );
    let run = ctx.evalctl(&["validate", "repo"]);
    run.expect(65);
    assert!(
        run.all_output().contains("pricing.yaml:2"),
        "{}",
        run.all_output()
    );

    ctx.write(
        "repo/pricing.yaml",
        "kind: Pricing\ndefault: {per_call: 0.1}\n",
    );
    ctx.write("repo/more.yaml", "kind: Pricing\ncurrency: EUR\n");
    let run = ctx.evalctl(&["validate", "repo"]);
    run.expect(65);
    assert!(
        run.all_output().contains("a second Pricing document"),
        "{}",
        run.all_output()
    );

    ctx.write("repo/more.yaml", "kind: Pricing\ncurrency: euro\n");
    std::fs::remove_file(ctx.path("repo/pricing.yaml")).expect("removed");
    let run = ctx.evalctl(&["validate", "repo"]);
    run.expect(65);
    assert!(
        run.all_output().contains("more.yaml:2"),
        "{}",
        run.all_output()
    );
}

/// A `target: forecast` policy rule reads the plan's figures: over its
/// budget, an error rule fails the plan (exit 65, at the rule's line) and a
/// warning rule is a note of the plan; within it, nothing is said.
#[test]
fn policies_on_the_forecast_read_the_plans_figures() {
    let rule = |severity: &str, limit: f64| {
        format!(
            "kind: Policy\nname: budget\nrules:\n  - name: judge-budget\n    target: forecast\n    \
             expression: forecast.llm_judge_calls_per_day <= {limit:.1}\n    \
             message: over the judge-call budget\n    severity: {severity}\n"
        )
    };
    let ctx = context();
    ctx.write("repo/policy.yaml", &rule("error", 10.0));
    let plan = ctx.evalctl(&["plan", "repo"]);
    plan.expect(65);
    assert!(
        plan.stderr.contains("over the judge-call budget") && plan.stderr.contains("policy.yaml:"),
        "{}",
        plan.stderr
    );
    assert!(
        !plan.stdout.contains("Forecast"),
        "no plan is printed: {}",
        plan.stdout
    );

    ctx.write("repo/policy.yaml", &rule("warning", 10.0));
    let plan = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    plan.expect(0);
    let json: Value = serde_json::from_str(&plan.stdout).expect("a JSON plan");
    let notes = json["notes"].as_array().expect("notes");
    assert!(
        notes.iter().any(|n| n["message"]
            .as_str()
            .is_some_and(|m| m.contains("over the judge-call budget"))),
        "{notes:?}"
    );

    ctx.write("repo/policy.yaml", &rule("error", 1e9));
    let plan = ctx.evalctl(&["plan", "repo"]);
    plan.expect(0);
    assert!(
        !plan.stderr.contains("judge-call budget"),
        "{}",
        plan.stderr
    );
}

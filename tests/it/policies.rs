//! `kind: Policy` and `kind: Settings` through the binary (issue 21, items 2 and 3): a
//! rule of each target and severity on the demo project; violations at the object's
//! `file:line:column` in every output (validate's text, JSON and GitHub annotations;
//! plan's text, JSON and markdown notes for warnings); error-severity rules fail
//! validate, plan, apply and drift with 65 and apply writes nothing; a rule that does not
//! compile at its own line and column; the repo's guard thresholds applied, a loosened
//! guard warned about in every plan, and two Settings documents refused at both.

use crate::e2e_support::{Run, TestContext};

/// demo-project: production samples 5% in its last rule, runs 5 judges on
/// correctness, has no toxicity scorer; an experiment and a template.
const PROJECT: &str = "\
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 5
        - name: context_adherence
      segment_filters:
        - sample_rate: 0.05
  - name: staging
experiments:
  - name: baseline-eval
annotation_templates:
  - name: helpful
    constraints:
      annotation_type: like_dislike
";

/// One rule of every target but the forecast; errors and warnings.
const POLICY: &str = "\
kind: Policy
name: team-rules
rules:
  - name: production-samples-10-percent
    target: log_streams
    expression: >-
      log_stream.name != 'production' || !has(log_stream.metric_settings.segment_filters)
      || log_stream.metric_settings.segment_filters.all(f, f.sample_rate >= 0.1)
    message: production samples at least 10%
  - name: at-most-3-judges
    target: scorers
    expression: '!has(scorer.num_judges) || scorer.num_judges <= 3'
    message: at most 3 judges
    severity: error
  - name: toxicity-on-production
    target: projects
    expression: project.log_streams.all(l, l.name != 'production' || l.metric_settings.scorers.exists(s, s.name.contains('toxicity')))
    message: production scores toxicity
    severity: warning
  - name: experiments-are-named-eval
    target: experiments
    expression: experiment.name.endsWith('-eval') && project.name == 'demo-project'
    message: experiment names end in -eval
  - name: templates-explain
    target: templates
    expression: has(template.include_explanation) && template.include_explanation
    message: raters explain their annotations
    severity: warning
  - name: integrations-rotate
    target: integrations
    expression: has(integration.rotate_secrets)
    message: integrations say whether they rotate their secrets
    severity: warning
";

const INTEGRATION: &str = "kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\n";

fn repo(ctx: &TestContext, policy: &str) {
    ctx.write("config/project.yaml", PROJECT);
    ctx.write("config/integrations.yaml", INTEGRATION);
    ctx.write("config/policies.yaml", policy);
}

fn run(ctx: &TestContext, args: &[&str]) -> Run {
    ctx.evalctl_with(&[("OPENAI_API_KEY", "sk-policy-test-secret")], args)
}

#[test]
fn violations_are_reported_at_their_objects_in_every_validate_format() {
    let ctx = TestContext::new();
    repo(&ctx, POLICY);
    let settings = ctx.insta_settings();
    let _bound = settings.bind_to_scope();

    let text = run(&ctx, &["validate", "config"]);
    text.expect(65);
    assert_eq!(text.stdout, "2 errors, 3 warnings in 3 files\n");
    insta::assert_snapshot!("validate_text", text.stderr);

    let json = run(&ctx, &["validate", "config", "-o", "json"]);
    json.expect(65);
    insta::assert_snapshot!("validate_json", json.stdout);

    let github = run(&ctx, &["validate", "config", "-o", "github"]);
    github.expect(65);
    insta::assert_snapshot!("validate_github", github.stdout);
    for out in [&text, &json, &github] {
        assert!(!out.all_output().contains("sk-policy-test-secret"));
    }
}

#[test]
fn error_rules_fail_every_command_with_65_and_apply_writes_nothing() {
    let ctx = TestContext::new();
    repo(&ctx, POLICY);
    for command in [
        &["plan", "config"][..],
        &["apply", "config", "--auto-approve"],
        &["drift", "config"],
    ] {
        let out = run(&ctx, command);
        out.expect(65);
        assert!(
            out.stderr.contains("--> config/project.yaml:7:11\n"),
            "{command:?}: {}",
            out.stderr
        );
    }
    // Nothing was written: the scorer and template the project declares are not live.
    let fixed = POLICY
        .replace("num_judges <= 3", "num_judges <= 5")
        .replace("sample_rate >= 0.1", "sample_rate >= 0.05");
    repo(&ctx, &fixed);
    let plan = run(&ctx, &["plan", "config", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(plan.stdout.contains("context_adherence"), "{}", plan.stdout);
}

#[test]
fn warnings_pass_and_every_plan_format_notes_them() {
    let ctx = TestContext::new();
    let warnings_only = POLICY
        .replace("num_judges <= 3", "num_judges <= 5")
        .replace("sample_rate >= 0.1", "sample_rate >= 0.05");
    repo(&ctx, &warnings_only);
    run(&ctx, &["validate", "config"]).expect(0);

    let note = "policy warning at config/project.yaml:1:1: project `demo-project`: production scores toxicity";
    let text = run(&ctx, &["plan", "config", "--github-annotations"]);
    text.expect(0);
    assert!(
        text.stdout.contains(&format!("  * {note}")),
        "{}",
        text.stdout
    );
    assert!(
        text.stderr
            .contains("::warning file=config/project.yaml,line=1,col=1::project `demo-project`: production scores toxicity"),
        "{}",
        text.stderr
    );
    let markdown = run(&ctx, &["plan", "config", "-o", "markdown"]);
    markdown.expect(0);
    assert!(
        markdown.stdout.contains(&format!("- {note}")),
        "{}",
        markdown.stdout
    );
    let json = run(&ctx, &["plan", "config", "-o", "json"]);
    json.expect(0);
    let plan: serde_json::Value = serde_json::from_str(&json.stdout).expect("a JSON plan");
    let notes: Vec<&str> = plan["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(|n| n["message"].as_str())
        .filter(|m| m.starts_with("policy warning"))
        .collect();
    assert_eq!(notes.len(), 3, "{notes:#?}");
    assert!(notes.iter().any(|n| n.starts_with(note)));
}

#[test]
fn a_rule_that_does_not_compile_is_reported_at_its_own_line_and_column() {
    let ctx = TestContext::new();
    let broken = "\
kind: Policy
name: broken
rules:
  - name: parse-error
    target: scorers
    expression: scorer.num_judges <= )
    message: m
  - name: unknown-variable
    target: log_streams
    expression: \"log_stream.name == 'x' || scorr.name == 'y'\"
    message: m
  - name: parse-error
    target: forecast
    expression: >-
      forecast.llm_judge_calls_per_day <
    message: m
";
    repo(&ctx, broken);
    let out = run(&ctx, &["validate", "config"]);
    out.expect(65);
    let settings = ctx.insta_settings();
    let _bound = settings.bind_to_scope();
    insta::assert_snapshot!("compile_errors", out.stderr);
    // A policy that does not load evaluates nothing: no violation of the project.
    assert!(!out.stderr.contains("project.yaml"), "{}", out.stderr);
}

/// demo-project's production log stream with `sections` as YAML flow text.
fn sections(sections: &str) -> String {
    format!(
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections: {sections}\n"
    )
}

#[test]
fn the_repo_sets_the_guard_and_loosening_it_is_never_silent() {
    let ctx = TestContext::new();
    let ten: Vec<String> = (1..=10).map(|i| format!("{{name: S{i:02}}}")).collect();
    ctx.write(
        "setup/project.yaml",
        &sections(&format!("[{}]", ten.join(", "))),
    );
    run(
        &ctx,
        &[
            "apply",
            "setup",
            "--prune",
            "--auto-approve",
            "--allow-mass-changes",
        ],
    )
    .expect(0);
    // Three of ten sections deleted: 30%, past the default 25%.
    let seven: Vec<String> = (1..=7).map(|i| format!("{{name: S{i:02}}}")).collect();
    ctx.write(
        "pruned/project.yaml",
        &sections(&format!("[{}]", seven.join(", "))),
    );
    let refused = run(&ctx, &["apply", "pruned", "--prune", "--auto-approve"]);
    refused.expect(1);
    assert!(
        refused
            .stderr
            .contains("more than 25% of one holding at least 8"),
        "{}",
        refused.stderr
    );

    // Tighter than the defaults: quiet, and applied (a share of 20%: refused).
    ctx.write(
        "pruned/settings.yaml",
        "kind: Settings\nguard:\n  max_share: 0.2\n  min_objects: 4\n",
    );
    let validate = run(&ctx, &["validate", "pruned"]);
    validate.expect(0);
    assert!(!validate.stderr.contains("warning"), "{}", validate.stderr);
    let refused = run(&ctx, &["apply", "pruned", "--prune", "--auto-approve"]);
    refused.expect(1);
    assert!(
        refused
            .stderr
            .contains("more than 20% of one holding at least 4"),
        "{}",
        refused.stderr
    );

    // Looser: the plan passes, and says so in every format, naming the file and limit.
    ctx.write(
        "pruned/settings.yaml",
        "kind: Settings\nguard:\n  max_share: 0.5\n",
    );
    let text = run(&ctx, &["plan", "pruned", "--prune"]);
    text.expect(0);
    assert!(
        !text.all_output().contains("apply refuses it"),
        "{}",
        text.all_output()
    );
    assert!(
        text.stderr.contains("warning: the mass-change guard is loosened: max_share 50% (default 25%)\n --> pruned/settings.yaml:2:1"),
        "{}",
        text.stderr
    );
    let note =
        "the mass-change guard is loosened by pruned/settings.yaml:1: max_share 50% (default 25%)";
    assert!(text.stdout.contains(note), "{}", text.stdout);
    let markdown = run(&ctx, &["plan", "pruned", "--prune", "-o", "markdown"]);
    assert!(
        markdown.stdout.contains(&format!("- {note}")),
        "{}",
        markdown.stdout
    );
    let github = run(&ctx, &["validate", "pruned", "-o", "github"]);
    github.expect(0);
    assert!(
        github.stdout.contains(
            "::warning file=pruned/settings.yaml,line=2,col=1::the mass-change guard is loosened"
        ),
        "{}",
        github.stdout
    );
    run(&ctx, &["apply", "pruned", "--prune", "--auto-approve"]).expect(0);
    assert_eq!(ctx.demo_dashboard("production").dashboard.sections.len(), 7);
}

#[test]
fn two_settings_documents_are_an_error_at_both() {
    let ctx = TestContext::new();
    ctx.write("config/project.yaml", "kind: Project\nname: demo-project\n");
    ctx.write(
        "config/a.yaml",
        "kind: Settings\nguard:\n  max_share: 0.2\n",
    );
    ctx.write("config/b.yaml", "# the team's\nkind: Settings\n");
    let out = run(&ctx, &["validate", "config"]);
    out.expect(65);
    let settings = ctx.insta_settings();
    let _bound = settings.bind_to_scope();
    insta::assert_snapshot!("two_settings", out.stderr);
}

#[test]
fn a_rule_over_an_integration_never_shows_its_secret() {
    let ctx = TestContext::new();
    let policy = "\
kind: Policy
name: secrets
rules:
  - name: reads-the-token
    target: integrations
    expression: integration.token.size() > 1000
    message: a long token
    severity: warning
  - name: breaks-on-the-token
    target: integrations
    expression: integration.token > 5
    message: m
    severity: warning
  - name: gives-the-token
    target: integrations
    expression: integration.token
    message: m
    severity: warning
";
    repo(&ctx, policy);
    for format in ["text", "json", "github"] {
        let out = run(&ctx, &["validate", "config", "-o", format]);
        out.expect(0);
        let all = out.all_output();
        let shown = if format == "text" {
            &out.stderr
        } else {
            &out.stdout
        };
        assert_eq!(shown.matches("integration `openai`").count(), 3, "{all}");
        assert!(!all.contains("sk-policy-test-secret"), "{all}");
    }
    let plan = run(&ctx, &["plan", "config", "-o", "markdown"]);
    plan.expect(0);
    assert!(!plan.all_output().contains("sk-policy-test-secret"));
    assert!(
        plan.stdout
            .contains("rule `breaks-on-the-token` cannot be evaluated"),
        "{}",
        plan.stdout
    );
}

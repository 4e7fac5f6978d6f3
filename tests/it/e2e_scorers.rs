//! Custom scorers as code, through the binary on the sandbox (issue 20,
//! item 1): a scorer is created with its first version; a second apply
//! creates nothing; a one-word change of the prompt creates exactly one
//! version and the plan shows its diff; a pin holds while a version is
//! created; export round-trips; a create whose answer is lost is settled by
//! reading back, never making a second scorer or version.

use crate::e2e_support;

use e2e_support::{TestContext, report};
use evalctl::api::Scorer;
use evalctl::plan::{ApplyReport, OutcomeStatus};
use evalctl::sandbox::{Fault, Faults};

const PROMPT: &str = "You judge answers to support questions.\nQuestion: {{ input }}\nAnswer: {{ output }}\nIs the answer polite?\n";

const REPO: &str = r#"
kind: Scorer
name: politeness-judge
scorer_type: llm
description: Whether a support answer is polite.
tags: [support, tone]
scope: [demo-project]
chain_poll_template:
  template_file: prompts/politeness.txt
  metric_system_prompt: You are a careful judge of tone.
  metric_few_shot_examples:
    - generation_prompt_and_response: "Q: Where is my order? A: Read the FAQ."
      evaluating_response: '{"explanation": "Curt.", "rating": false}'
instructions: Rate politeness only, not correctness.
model_name: gpt-4.1-mini
num_judges: 3
output_type: boolean
"#;

fn repo(ctx: &TestContext, manifest: &str, prompt: &str) {
    ctx.write("repo/scorer.yaml", manifest);
    ctx.write("repo/prompts/politeness.txt", prompt);
}

/// The custom scorers, read out of band.
fn scorers(ctx: &TestContext) -> Vec<Scorer> {
    let client = ctx.client();
    ctx.block_on(async {
        client
            .list_custom_scorers()
            .await
            .expect("the scorers are listed")
    })
}

fn scorer(ctx: &TestContext, name: &str) -> Scorer {
    scorers(ctx)
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("scorer {name} exists"))
}

fn latest(s: &Scorer) -> i64 {
    s.latest_version.as_ref().map_or(0, |v| v.version)
}

fn posts(ctx: &TestContext, suffix: &str) -> usize {
    ctx.sandbox
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with(suffix))
        .count()
}

#[test]
fn created_from_nothing_then_a_second_apply_creates_nothing() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout.contains("+ scorer[politeness-judge]"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("Is the answer polite?"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let s = scorer(&ctx, "politeness-judge");
    assert_eq!(latest(&s), 1);
    assert_eq!(
        s.description.as_deref(),
        Some("Whether a support answer is polite.")
    );
    assert!(!s.is_global, "scoped to demo-project");
    let v = s.latest_version.as_ref().expect("version 1");
    let g = v.generated_scorer.as_ref().expect("an LLM version");
    assert_eq!(g.chain_poll_template.template, PROMPT);
    assert_eq!(v.num_judges, Some(3));

    // Re-apply: nothing to do, no version bump.
    let before = posts(&ctx, "/version/llm");
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(posts(&ctx, "/version/llm"), before);
    assert_eq!(latest(&scorer(&ctx, "politeness-judge")), 1);
    assert_eq!(posts(&ctx, "/v2/scorers"), 1, "the scorer was created once");
}

#[test]
fn a_one_word_change_creates_exactly_one_version_and_the_plan_shows_its_diff() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    repo(&ctx, REPO, &PROMPT.replace("polite?", "courteous?"));
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("+ scorer[politeness-judge].version[2]"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("-Is the answer polite?")
            && plan.stdout.contains("+Is the answer courteous?"),
        "the plan shows a unified diff of the prompt:\n{}",
        plan.stdout
    );
    let before = posts(&ctx, "/version/llm");
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(posts(&ctx, "/version/llm"), before + 1);
    let s = scorer(&ctx, "politeness-judge");
    assert_eq!(latest(&s), 2);
    // What the manifest leaves out (user prompt, input type) is the
    // latest version's; what it writes is kept.
    assert_eq!(
        s.latest_version.as_ref().and_then(|v| v.num_judges),
        Some(3)
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // Metadata is an update, with no new version.
    repo(
        &ctx,
        &REPO.replace("tags: [support, tone]", "tags: [support, tone, v2]"),
        &PROMPT.replace("polite?", "courteous?"),
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert!(
        plan.stdout.contains("~ scorer[politeness-judge]") && !plan.stdout.contains("version[3]"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(posts(&ctx, "/version/llm"), before + 1);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_pin_holds_while_a_new_version_is_created() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let pinned = REPO.replace(
        "scorer_type: llm\n",
        "scorer_type: llm\ndefault_version: 1\n",
    );
    repo(&ctx, &pinned, &PROMPT.replace("polite?", "kind?"));
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert!(
        plan.stdout.contains("version 1 stays pinned"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let s = scorer(&ctx, "politeness-judge");
    assert_eq!(latest(&s), 2, "the new version is created");
    assert_eq!(
        s.default_version.as_ref().map(|v| v.version),
        Some(1),
        "the pin holds"
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // Moving the pin is an update and creates no version.
    repo(
        &ctx,
        &pinned.replace("default_version: 1", "default_version: 2"),
        &PROMPT.replace("polite?", "kind?"),
    );
    let before = posts(&ctx, "/version/llm");
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(posts(&ctx, "/version/llm"), before);
    let s = scorer(&ctx, "politeness-judge");
    assert_eq!(s.default_version.as_ref().map(|v| v.version), Some(2));

    // A version that does not exist is an error at the manifest's field.
    repo(
        &ctx,
        &pinned.replace("default_version: 1", "default_version: 9"),
        &PROMPT.replace("polite?", "kind?"),
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert_ne!(plan.status, 0);
    assert!(
        plan.all_output().contains("has no version 9"),
        "{}",
        plan.all_output()
    );
}

/// A version's create whose answer is lost. (The scorer's own create,
/// `POST /v2/scorers`, cannot be faulted alone: the sandbox's faults select
/// by a part of the path, which the listing, `POST /v2/scorers/list`, that
/// settles it shares; it is settled by the same code.)
#[test]
fn a_lost_answer_to_a_version_create_is_settled_without_a_second_version() {
    for (seed, drop_after) in [(1, true), (2, false)] {
        let ctx = TestContext::new();
        repo(&ctx, REPO, PROMPT);
        // Every POST of a version is processed, then its answer is lost (a
        // dropped connection, or a 5xx).
        ctx.faults(Faults {
            fail_after_rate: if drop_after { 0.0 } else { 1.0 },
            drop_after_rate: if drop_after { 1.0 } else { 0.0 },
            seed,
            path_contains: Some("/version/llm".into()),
            method: Some("POST".into()),
            ..Faults::none()
        });
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
        let hits = ctx
            .sandbox
            .requests()
            .iter()
            .filter(|r| matches!(r.fault, Some(Fault::FailAfter(_) | Fault::DropAfter)))
            .count();
        ctx.faults(Faults::none());
        let r = report(&run);
        assert_eq!(run.status, 0, "{}", run.all_output());
        for o in &r.outcomes {
            assert_eq!(o.status, OutcomeStatus::Succeeded, "{}", run.all_output());
            let detail = o.detail.as_deref().unwrap_or_default();
            assert!(
                detail.contains("a re-read found the custom scorer version"),
                "{}: {detail}",
                o.address
            );
        }
        assert!(hits >= 1, "the fault never hit");
        assert_eq!(posts(&ctx, "/v2/scorers"), 1, "one scorer create was sent");
        assert_eq!(
            posts(&ctx, "/version/llm"),
            1,
            "one version create was sent"
        );
        let named: Vec<Scorer> = scorers(&ctx)
            .into_iter()
            .filter(|s| s.name == "politeness-judge")
            .collect();
        assert_eq!(named.len(), 1);
        assert_eq!(latest(&named[0]), 1);
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
}

#[test]
fn a_missing_prompt_file_is_an_error_at_its_line() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/scorer.yaml",
        &REPO.replace("prompts/politeness.txt", "prompts/missing.txt"),
    );
    let run = ctx.evalctl(&["validate", "repo"]);
    assert_eq!(run.status, 65, "{}", run.all_output());
    assert!(
        run.all_output().contains("scorer.yaml:9:18")
            && run.all_output().contains("prompts/missing.txt"),
        "{}",
        run.all_output()
    );
}

#[test]
fn a_plan_that_adds_a_version_says_which_runs_follow_it_and_which_stay_pinned() {
    let ctx = TestContext::new();
    // The demo's helpfulness-judge (versions 1 and 2), its prompt changed.
    ctx.write(
        "repo/scorer.yaml",
        "kind: Scorer\nname: helpfulness-judge\nscorer_type: llm\nchain_poll_template:\n  template: |\n    Question and answer:\n    {{ input }}\n    {{ output }}\n    Is the answer helpful and kind?\n",
    );
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: staging\n    metric_settings:\n      scorers:\n        - name: helpfulness-judge\nexperiments:\n  - name: baseline-eval\n    metric_settings:\n      scorers:\n        - name: helpfulness-judge\n          scorer_version: 1\n",
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    let out = plan.all_output();
    assert!(
        out.contains("+ scorer[helpfulness-judge].version[3]"),
        "{out}"
    );
    assert!(
        out.contains(
            "project[demo-project].log_stream[staging].metric_settings: follows the latest, so it runs the new version 3"
        ),
        "{out}"
    );
    assert!(
        out.contains("project[demo-project].experiment[baseline-eval].metric_settings: stays pinned to version 1"),
        "{out}"
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(latest(&scorer(&ctx, "helpfulness-judge")), 3);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn prune_deletes_an_undeclared_scorer_and_a_refusal_says_what_uses_it() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    // Without --prune the demo's custom scorers are noted, not deleted.
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(0);
    assert!(
        plan.all_output().contains("Unmanaged")
            && plan.all_output().contains("* scorer[helpfulness-judge]"),
        "{}",
        plan.all_output()
    );
    let plan = ctx.evalctl(&["plan", "repo", "--prune"]);
    assert!(
        plan.stdout.contains("- scorer[helpfulness-judge]"),
        "{}",
        plan.stdout
    );
    // Both demo scorers are used by experiments' metric settings: the
    // service refuses, and the failure names the user.
    let run = ctx.evalctl(&["apply", "repo", "--prune", "--auto-approve"]);
    assert_ne!(run.status, 0, "{}", run.all_output());
    assert!(
        run.all_output()
            .contains("is used by the metric settings of experiment")
            && run.all_output().contains("baseline-eval")
            && run
                .all_output()
                .contains("was not deleted: the service refuses while it is in use")
            && run.all_output().contains("for a reason that stays"),
        "{}",
        run.all_output()
    );
    assert!(scorers(&ctx).iter().any(|s| s.name == "helpfulness-judge"));
}

#[test]
fn a_rename_keeps_the_scorer_and_its_versions() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let id = scorer(&ctx, "politeness-judge").id;
    repo(
        &ctx,
        &REPO.replace(
            "name: politeness-judge\n",
            "name: courtesy-judge\nrenamed_from: [politeness-judge]\n",
        ),
        PROMPT,
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert!(
        plan.stdout.contains("~ scorer[courtesy-judge]") && !plan.stdout.contains("version["),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let renamed = scorer(&ctx, "courtesy-judge");
    assert_eq!((latest(&renamed), renamed.id), (1, id));
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

const CODE: &str = "def scorer_fn(*, index: int, node_input: str, node_output: str, **kwargs) -> bool:\n    return len(node_output) <= 2000\n";

const CODE_REPO: &str = "kind: Scorer\nname: short-answer\nscorer_type: code\ndescription: Whether an answer is short.\nscope: global\ncode_file: scorers/short_answer.py\n";

fn code_repo(ctx: &TestContext, code: &str) {
    ctx.write("repo/scorer.yaml", CODE_REPO);
    ctx.write("repo/scorers/short_answer.py", code);
}

/// The file of the latest version of a code scorer.
fn code_of(ctx: &TestContext, name: &str) -> String {
    let s = scorer(ctx, name);
    let client = ctx.client();
    let n = u32::try_from(latest(&s)).expect("a version");
    ctx.block_on(async {
        client
            .scorer_version_code(&s.id, n)
            .await
            .expect("the code is read")
            .expect("the version has code")
    })
}

#[test]
fn a_code_scorer_is_validated_then_versioned_and_a_change_is_one_version_with_its_diff() {
    let ctx = TestContext::new();
    code_repo(&ctx, CODE);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout.contains("+ scorer[short-answer]"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(code_of(&ctx, "short-answer"), CODE);
    assert_eq!(posts(&ctx, "/code/validate"), 1, "validated once");
    // The sandbox answers `pending` at a task's first poll: it was polled
    // until completed.
    assert!(
        ctx.sandbox
            .requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path.contains("/code/validate/"))
            .count()
            >= 2
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(posts(&ctx, "/version/code"), 1, "no version bump");

    let changed = CODE.replace("<= 2000", "<= 1000");
    code_repo(&ctx, &changed);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout.contains("+ scorer[short-answer].version[2]")
            && plan.stdout.contains("-    return len(node_output) <= 2000")
            && plan.stdout.contains("+    return len(node_output) <= 1000"),
        "the plan shows a unified diff of the code:\n{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(posts(&ctx, "/version/code"), 2);
    assert_eq!(code_of(&ctx, "short-answer"), changed);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_failing_validation_is_reported_with_the_service_message_and_creates_no_version() {
    let ctx = TestContext::new();
    code_repo(&ctx, CODE);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    code_repo(&ctx, "def score(x):\n    return True\n");
    let run = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
    // The user's code is wrong: an error (1), not an unfinished apply (3).
    assert_eq!(run.status, 1, "{}", run.all_output());
    assert!(
        run.all_output().contains("No function named 'scorer_fn'")
            && run.all_output().contains("no version was created")
            && run.all_output().contains("for a reason that stays"),
        "{}",
        run.all_output()
    );
    assert_eq!(posts(&ctx, "/version/code"), 1, "nothing was created");
    assert_eq!(latest(&scorer(&ctx, "short-answer")), 1);
    assert_eq!(code_of(&ctx, "short-answer"), CODE);
    let report: ApplyReport = {
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
        assert_eq!(run.status, 1, "{}", run.all_output());
        report(&run)
    };
    assert!(
        report.outcomes.iter().any(|o| o.invalid_input),
        "{report:?}"
    );
}

#[test]
fn a_new_code_scorer_whose_file_fails_validation_creates_neither_scorer_nor_version() {
    let ctx = TestContext::new();
    code_repo(&ctx, "def score(x):\n    return True\n");
    let run = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
    assert_eq!(run.status, 1, "{}", run.all_output());
    assert!(
        run.all_output().contains("No function named 'scorer_fn'")
            && run.all_output().contains("no version was created"),
        "{}",
        run.all_output()
    );
    assert!(
        !scorers(&ctx).iter().any(|s| s.name == "short-answer"),
        "no scorer was created"
    );
    assert_eq!(posts(&ctx, "/v2/scorers"), 0);
    assert_eq!(posts(&ctx, "/version/code"), 0);
    // Fixed, the next apply creates it.
    code_repo(&ctx, CODE);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(code_of(&ctx, "short-answer"), CODE);
}

#[test]
fn export_writes_scorers_with_their_prompts_and_code_in_files_and_plans_empty() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.write("repo/code.yaml", CODE_REPO);
    ctx.write("repo/scorers/short_answer.py", CODE);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["export", "--dir", "exported", "--verify"])
        .expect(0);
    let exported = std::fs::read_to_string(ctx.path("exported/scorers.yaml"))
        .expect("the export of the scorers");
    assert!(exported.contains("kind: Scorer"), "{exported}");
    assert!(
        exported.contains("template_file: scorer-politeness-judge.prompt.txt")
            && exported.contains("code_file: scorer-short-answer.py"),
        "{exported}"
    );
    assert_eq!(
        std::fs::read_to_string(ctx.path("exported/scorer-politeness-judge.prompt.txt"))
            .expect("the prompt file"),
        PROMPT
    );
    assert_eq!(
        std::fs::read_to_string(ctx.path("exported/scorer-short-answer.py"))
            .expect("the code file"),
        CODE
    );
    // The demo's own custom scorers are exported too.
    assert!(exported.contains("name: helpfulness-judge"), "{exported}");
    ctx.evalctl(&["plan", "exported", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_saved_plan_applies_once_and_applied_again_creates_no_second_version() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    repo(&ctx, REPO, &PROMPT.replace("polite?", "courteous?"));
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let first = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    assert_eq!(first.status, 0, "{}", first.all_output());
    assert_eq!(posts(&ctx, "/version/llm"), 2);
    // The same saved plan again: it reads back as applied, and nothing is
    // sent.
    let again = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    again.expect(0);
    assert!(
        again.all_output().contains("was already applied"),
        "{}",
        again.all_output()
    );
    assert_eq!(posts(&ctx, "/version/llm"), 2, "{}", again.all_output());
    assert_eq!(latest(&scorer(&ctx, "politeness-judge")), 2);
}

#[test]
fn two_applies_creating_one_scorer_at_once_leave_one_scorer_with_one_version() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    // Slow enough that both read before either creates.
    ctx.faults(Faults {
        latency: std::time::Duration::from_millis(30),
        ..Faults::none()
    });
    let barrier = std::sync::Barrier::new(2);
    let (a, b) = std::thread::scope(|s| {
        let run = || {
            barrier.wait();
            ctx.evalctl(&["apply", "repo", "--auto-approve"])
        };
        let first = s.spawn(run);
        let second = s.spawn(run);
        (
            first.join().expect("the first apply"),
            second.join().expect("the second apply"),
        )
    });
    ctx.faults(Faults::none());
    // The run that finds the scorer made by the other adopts it: it waits
    // for the other's first version, finds it holds the same definition,
    // and makes none. Both succeed.
    for run in [&a, &b] {
        assert_eq!(run.status, 0, "{}", run.all_output());
    }
    assert!(
        a.all_output().contains("this run adopted it")
            || b.all_output().contains("this run adopted it"),
        "{}\n{}",
        a.all_output(),
        b.all_output()
    );
    let named: Vec<Scorer> = scorers(&ctx)
        .into_iter()
        .filter(|s| s.name == "politeness-judge")
        .collect();
    assert_eq!(named.len(), 1, "one scorer");
    assert_eq!(latest(&named[0]), 1, "one version");
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

/// Metric settings of the demo project that use the politeness judge the
/// same manifests declare: staging follows the latest, the experiment is
/// pinned to its version 1.
const USES: &str = "kind: Project\nname: demo-project\nlog_streams:\n  - name: staging\n    metric_settings:\n      scorers:\n        - name: politeness-judge\nexperiments:\n  - name: baseline-eval\n    metric_settings:\n      scorers:\n        - name: politeness-judge\n          scorer_version: 1\n";

/// The scorer configs of the demo's staging log stream and baseline-eval
/// experiment, read out of band: (scorer id, pinned version id) of the
/// scorer named `name`.
#[allow(clippy::type_complexity)]
fn uses_of(ctx: &TestContext, name: &str) -> (Option<String>, Option<(String, Option<String>)>) {
    let client = ctx.client();
    ctx.block_on(async {
        let project = client
            .find_project_by_name("demo-project")
            .await
            .expect("lookup")
            .expect("the demo project");
        let stream = client
            .find_log_stream_by_name(&project.id, "staging")
            .await
            .expect("lookup")
            .expect("the staging log stream");
        let staging = client
            .get_log_stream_metric_settings(&project.id, &stream.id)
            .await
            .expect("staging's settings")
            .expect("settings");
        let eval = client
            .find_experiment_by_name(&project.id, "baseline-eval")
            .await
            .expect("lookup")
            .expect("baseline-eval");
        let pinned = client
            .get_experiment_metric_settings(&project.id, &eval.id)
            .await
            .expect("baseline-eval's settings")
            .expect("settings");
        let find = |configs: Vec<evalctl::api::ScorerConfig>| {
            configs
                .into_iter()
                .find(|c| c.name.as_deref() == Some(name))
        };
        (
            find(staging.scorers).map(|c| c.id),
            find(pinned.scorers).map(|c| (c.id, c.scorer_version.map(|v| v.id))),
        )
    })
}

#[test]
fn a_scorer_created_in_the_same_apply_is_used_by_metric_settings_followed_and_pinned() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.write("repo/project.yaml", USES);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    for line in [
        "+ scorer[politeness-judge]",
        "~ project[demo-project].log_stream[staging].metric_settings",
        "~ project[demo-project].experiment[baseline-eval].metric_settings",
    ] {
        assert!(plan.stdout.contains(line), "{line}:\n{}", plan.stdout);
    }
    assert!(
        !plan.all_output().contains("pending:"),
        "{}",
        plan.all_output()
    );
    let run = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    let s = scorer(&ctx, "politeness-judge");
    let v1 = s.latest_version.as_ref().expect("version 1").id.clone();
    let (follows, pinned) = uses_of(&ctx, "politeness-judge");
    assert_eq!(
        follows.as_deref(),
        Some(s.id.as_str()),
        "staging follows it"
    );
    assert_eq!(
        pinned,
        Some((s.id.clone(), Some(v1))),
        "the experiment pins 1"
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    assert_eq!(posts(&ctx, "/v2/scorers"), 1, "the scorer was created once");
    assert_eq!(posts(&ctx, "/version/llm"), 1, "and its version once");
}

#[test]
fn a_saved_plan_that_creates_a_scorer_and_uses_it_resolves_it_when_applied() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.write("repo/project.yaml", USES);
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let saved = std::fs::read_to_string(ctx.path("plan.json")).expect("the saved plan");
    assert!(
        saved.contains("pending:scorer:politeness-judge")
            && saved.contains("pending:scorer_version:politeness-judge:1"),
        "the saved plan carries the pending references"
    );
    let run = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    let s = scorer(&ctx, "politeness-judge");
    let v1 = s.latest_version.as_ref().expect("version 1").id.clone();
    assert_eq!(
        uses_of(&ctx, "politeness-judge"),
        (Some(s.id.clone()), Some((s.id.clone(), Some(v1))))
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn metric_settings_may_pin_the_version_the_same_apply_adds() {
    let ctx = TestContext::new();
    repo(&ctx, REPO, PROMPT);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    repo(&ctx, REPO, &PROMPT.replace("polite?", "courteous?"));
    ctx.write(
        "repo/project.yaml",
        &USES.replace("scorer_version: 1", "scorer_version: 2"),
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert!(
        plan.stdout
            .contains("+ scorer[politeness-judge].version[2]"),
        "{}",
        plan.all_output()
    );
    let run = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    let s = scorer(&ctx, "politeness-judge");
    let v2 = s.latest_version.as_ref().expect("version 2");
    assert_eq!(v2.version, 2);
    assert_eq!(
        uses_of(&ctx, "politeness-judge").1,
        Some((s.id.clone(), Some(v2.id.clone())))
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

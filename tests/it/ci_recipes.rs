//! The CI recipes of `examples/ci` cannot rot: every `evalctl` command line of their
//! `run:` steps is extracted, checked against the command-line definition (a flag
//! evalctl does not have fails here), and run with the real binary against an
//! in-process sandbox, in a config repo laid out where the recipes look for it, with
//! the environment the recipe gives the step (secrets replaced by sandbox values). The
//! scenarios assert the exit statuses the recipes gate on: plan 2 on a fresh sandbox
//! then 0 after apply, drift 0 then 2 after an out-of-band change, markdown under the
//! 60,000 characters of a comment; that drift, given the manifests as last applied
//! (the tag apply.yml moves), tells out-of-band drift from a change merged and not
//! applied; and that the saved plan carries what the labelling step reads.
//!
//! The recipes keep to a convention (stated at the top of each): an evalctl command is
//! one line of a `run:` block starting with `evalctl`, using only variables of `env:`,
//! followed at most by `> FILE` and `|| status=$?`. This file enforces it.

use crate::ci_support;
use crate::e2e_support;

use std::collections::BTreeMap;

use ci_support::{Invocation, Secrets, files_read, invocations};
use clap::Parser as _;
use e2e_support::{DEMO_API_KEY, Run, TestContext, repo_root};
use evalctl::api::SectionUpdateRequest;
use evalctl::cli::Cli;

/// The recipes, in the order a change goes through them.
const RECIPES: [&str; 3] = ["plan.yml", "apply.yml", "drift.yml"];

/// What a comment or an issue body may hold (GitHub refuses 65,536).
const COMMENT_BUDGET: usize = 60_000;

const OPENAI_TOKEN: &str = "sk-test-ci-recipes-0123456789";
const ANTHROPIC_TOKEN: &str = "sk-ant-test-ci-recipes-0123";

/// The secrets a team configures, with test values: the sandbox's URL and demo key,
/// integration tokens.
fn secrets(base_url: &str) -> Secrets {
    Secrets::new([
        ("EVALCTL_BASE_URL", base_url),
        ("EVALCTL_API_KEY", DEMO_API_KEY),
        ("OPENAI_API_KEY", OPENAI_TOKEN),
        ("ANTHROPIC_API_KEY", ANTHROPIC_TOKEN),
    ])
}

/// A recipe's text.
fn recipe_text(name: &str) -> String {
    std::fs::read_to_string(repo_root().join("examples/ci").join(name))
        .unwrap_or_else(|e| panic!("examples/ci/{name}: {e}"))
}

/// Runs a recipe's line against the context's sandbox, in its config repo, with only
/// the credentials the recipe gives the step; writes the redirected output like the
/// shell would.
fn run(invocation: &Invocation, ctx: &TestContext) -> Run {
    let mut env: Vec<(&str, &str)> = vec![("EVALCTL_BASE_URL", ""), ("EVALCTL_API_KEY", "")];
    env.extend(invocation.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let args: Vec<&str> = invocation.args.iter().skip(1).map(String::as_str).collect();
    let run = ctx.evalctl_with(&env, &args);
    if let Some(file) = &invocation.stdout {
        ctx.write(file, &run.stdout);
    }
    run
}

/// Every recipe's evalctl lines, each checked against the command-line definition.
fn all_invocations(secrets: &Secrets) -> BTreeMap<&'static str, Vec<Invocation>> {
    let mut all = BTreeMap::new();
    for name in RECIPES {
        let found =
            invocations(name, &recipe_text(name), secrets).unwrap_or_else(|e| panic!("{e}"));
        for invocation in &found {
            if let Err(e) = check_flags(invocation) {
                panic!("{e}");
            }
        }
        all.insert(name, found);
    }
    all
}

/// Whether evalctl accepts the line's command and flags.
fn check_flags(invocation: &Invocation) -> Result<(), String> {
    Cli::try_parse_from(&invocation.args)
        .map(drop)
        .map_err(|e| {
            format!(
                "{}: `{}` is not a valid evalctl command line:\n{e}",
                invocation.origin, invocation.line
            )
        })
}

/// The one line of `recipe` running `command`.
fn line<'a>(
    all: &'a BTreeMap<&'static str, Vec<Invocation>>,
    recipe: &str,
    command: &str,
) -> &'a Invocation {
    let matching: Vec<&Invocation> = all[recipe]
        .iter()
        .filter(|i| i.command() == command)
        .collect();
    assert_eq!(
        matching.len(),
        1,
        "{recipe}: one `evalctl {command}` line: {matching:#?}"
    );
    matching[0]
}

/// The directory every recipe's evalctl lines name (the argument right after the
/// subcommand: the recipes put it first).
fn config_dir(all: &BTreeMap<&'static str, Vec<Invocation>>) -> String {
    let dirs: std::collections::BTreeSet<&str> = all
        .values()
        .flatten()
        .filter_map(|i| i.args.get(2).map(String::as_str))
        .collect();
    assert!(
        dirs.iter().all(|d| !d.starts_with('-')),
        "the config directory comes right after the subcommand: {dirs:?}"
    );
    assert_eq!(
        dirs.len(),
        1,
        "the recipes name one config directory: {dirs:?}"
    );
    dirs.into_iter().next().unwrap_or_default().to_owned()
}

#[track_caller]
fn fits_a_comment(run: &Run, what: &str) {
    let chars = run.stdout.chars().count();
    assert!(
        chars > 0 && chars < COMMENT_BUDGET,
        "{what}: {chars} characters"
    );
}

#[test]
fn every_recipe_runs_only_command_lines_evalctl_has() {
    let secrets = secrets("http://127.0.0.1:9");
    let all = all_invocations(&secrets);
    let commands = |recipe: &str| -> Vec<String> {
        all[recipe].iter().map(|i| i.command().to_owned()).collect()
    };
    assert_eq!(commands("plan.yml"), ["validate", "plan"]);
    assert_eq!(commands("apply.yml"), ["apply"]);
    assert_eq!(commands("drift.yml"), ["drift"]);
    let plan = line(&all, "plan.yml", "plan");
    for flag in [
        "-o",
        "markdown",
        "--out",
        "--detailed-exitcode",
        "--github-annotations",
        "--base",
        "--fail-on",
    ] {
        assert!(plan.args.iter().any(|a| a == flag), "{flag}: {plan:#?}");
    }
    // Manifest problems become annotations on the pull request.
    let validate = line(&all, "plan.yml", "validate");
    assert!(
        validate
            .args
            .ends_with(&["-o".to_owned(), "github".to_owned()]),
        "{validate:#?}"
    );
    // The comment names the artifact the recipe uploads the saved plan as.
    let artifact = plan
        .args
        .iter()
        .position(|a| a == "--artifact")
        .and_then(|i| plan.args.get(i + 1))
        .unwrap_or_else(|| panic!("--artifact NAME: {plan:#?}"));
    let text = recipe_text("plan.yml");
    assert!(
        text.contains(&format!("EVALCTL_PLAN_ARTIFACT: {artifact}\n"))
            && text.contains("name: ${{ env.EVALCTL_PLAN_ARTIFACT }}\n          path: plan.json"),
        "the saved plan is uploaded under the name the comment gives"
    );
    assert!(
        line(&all, "apply.yml", "apply")
            .args
            .iter()
            .any(|a| a == "--auto-approve")
    );
    // Credentials reach the steps that talk to the service, from secrets.
    for (recipe, command) in [
        ("plan.yml", "plan"),
        ("apply.yml", "apply"),
        ("drift.yml", "drift"),
    ] {
        let env = &line(&all, recipe, command).env;
        assert_eq!(
            env.get("EVALCTL_API_KEY").map(String::as_str),
            Some(DEMO_API_KEY)
        );
        assert!(env.contains_key("EVALCTL_BASE_URL"), "{recipe}");
    }
    // Integration tokens only where they are sent.
    assert!(
        line(&all, "apply.yml", "apply")
            .env
            .contains_key("OPENAI_API_KEY")
    );
    assert!(
        !line(&all, "plan.yml", "plan")
            .env
            .contains_key("OPENAI_API_KEY")
    );
}

/// What setup-terraform, tfcmt and Atlantis users expect of the recipes:
/// a job summary of plan, apply and drift; the apply recorded (the tag the
/// other recipes read as --applied) and its result posted on the merged pull
/// request; the plan comment's footer naming the commit checked out (the
/// merge), not the head; a label on a plan that deletes or replaces.
#[test]
fn the_recipes_summarise_record_and_report() {
    let secrets = secrets("http://127.0.0.1:9");
    let all = all_invocations(&secrets);
    for recipe in RECIPES {
        let text = recipe_text(recipe);
        let file = match recipe {
            "plan.yml" => "plan.md",
            "apply.yml" => "apply.md",
            _ => "drift.md",
        };
        assert!(
            text.contains(&format!("cat {file} >> \"$GITHUB_STEP_SUMMARY\"")),
            "{recipe}: a job summary"
        );
    }
    // Recorded by apply, read by plan and drift.
    let apply = recipe_text("apply.yml");
    assert!(
        apply.contains("if: steps.apply.outputs.status == '0'")
            && apply.contains("git tag -f \"$EVALCTL_APPLIED_TAG\" \"$GITHUB_SHA\"")
            && apply.contains("git push -f origin \"refs/tags/$EVALCTL_APPLIED_TAG\"")
            && apply.contains("contents: write"),
        "apply.yml moves the tag after a complete apply"
    );
    assert!(
        apply.contains("listPullRequestsAssociatedWithCommit")
            && apply.contains("pull-requests: write"),
        "apply.yml comments on the merged pull request"
    );
    for recipe in ["plan.yml", "drift.yml"] {
        let text = recipe_text(recipe);
        assert!(
            text.contains("EVALCTL_APPLIED_TAG: evalctl-applied")
                && text.contains(
                    "git worktree add --detach applied \"refs/tags/$EVALCTL_APPLIED_TAG\""
                ),
            "{recipe} checks out the tag"
        );
        let command = if recipe == "plan.yml" {
            "plan"
        } else {
            "drift"
        };
        let invocation = line(&all, recipe, command);
        let applied = invocation
            .args
            .iter()
            .position(|a| a == "--applied")
            .and_then(|i| invocation.args.get(i + 1))
            .unwrap_or_else(|| panic!("{recipe}: --applied: {invocation:#?}"));
        assert_eq!(applied, "applied/config", "{recipe}");
    }
    // Drift compares the manifests with themselves as last applied: each
    // difference is drift or pending, never "this PR" or a conflict.
    let drift = line(&all, "drift.yml", "drift");
    let base = drift
        .args
        .iter()
        .position(|a| a == "--base")
        .and_then(|i| drift.args.get(i + 1));
    assert_eq!(base, drift.args.get(2), "{drift:#?}");
    let plan = recipe_text("plan.yml");
    assert!(
        plan.contains(
            "Plan of ${context.sha.slice(0, 7)}, the merge of ${pr.head.sha.slice(0, 7)}"
        ),
        "the footer names the merge commit actions/checkout checked out"
    );
    assert!(plan.contains("issues.addLabels") && plan.contains("issues.removeLabel"));
}

#[test]
fn a_line_evalctl_would_refuse_fails_the_check() {
    let secrets = secrets("http://127.0.0.1:9");
    let recipe = |run: &str| {
        format!(
            "on: push\nenv:\n  DIR: config\njobs:\n  j:\n    runs-on: x\n    steps:\n      - name: S\n        run: |\n          {run}\n"
        )
    };
    let unknown_flag = invocations(
        "t.yml",
        &recipe("evalctl plan \"$DIR\" --no-such-flag"),
        &secrets,
    )
    .expect("extracted");
    let e = check_flags(&unknown_flag[0]).expect_err("an unknown flag is refused");
    assert!(
        e.contains("t.yml: step \"S\"") && e.contains("--no-such-flag"),
        "{e}"
    );
    let typo = invocations("t.yml", &recipe("evalctl plna \"$DIR\""), &secrets).expect("extracted");
    assert!(check_flags(&typo[0]).is_err());

    for (run, says) in [
        ("evalctl plan ${{ env.DIR }}", "`${{ }}` expression"),
        ("evalctl plan \"$UNDEFINED\"", "`$UNDEFINED` is not defined"),
        (
            "evalctl plan \"$DIR\" | tee plan.txt",
            "unsupported shell plumbing",
        ),
        ("evalctl plan $(pwd)", "not a variable"),
        ("test -d config && evalctl plan config", "after `&&`"),
        ("if evalctl drift config; then echo ok; fi", "after `if`"),
    ] {
        let e = invocations("t.yml", &recipe(run), &secrets).expect_err(run);
        assert!(e.contains(says), "{run}: {e}");
    }
    let ok = invocations(
        "t.yml",
        &recipe("evalctl plan \"$DIR\" -o markdown > plan.md || status=$?"),
        &secrets,
    )
    .expect("the convention");
    assert_eq!(ok[0].args, ["evalctl", "plan", "config", "-o", "markdown"]);
    assert_eq!(ok[0].stdout.as_deref(), Some("plan.md"));
}

#[test]
fn the_recipes_gate_a_change_from_pull_request_to_drift() {
    let ctx = TestContext::new();
    let secrets = secrets(&ctx.sandbox.base_url());
    let all = all_invocations(&secrets);
    let dir = config_dir(&all);
    ctx.copy_dir("examples/quickstart", &dir);

    // A pull request: the manifests are valid, the plan has changes (2, which the
    // job accepts), the comment fits, the saved plan is there to upload. The base
    // branch has no manifests yet: every change is the PR's.
    run(line(&all, "plan.yml", "validate"), &ctx).expect(0);
    let plan = run(line(&all, "plan.yml", "plan"), &ctx);
    plan.expect(2);
    fits_a_comment(&plan, "the plan comment");
    assert!(
        plan.stdout.starts_with("## evalctl plan"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("### This PR changes (")
            && !plan.stdout.contains("### Conflicts")
            && !plan.stdout.contains("### Out-of-band"),
        "{}",
        plan.stdout
    );
    assert!(ctx.path("plan.json").is_file(), "the saved plan to upload");
    // The quickstart turns on completeness (3 judges) on production: the
    // judge-call forecast is the line under the summary.
    let lines: Vec<&str> = plan.stdout.lines().collect();
    let summary = lines
        .iter()
        .position(|l| l.starts_with("**Plan:"))
        .expect("a summary line");
    assert_eq!(
        lines.get(summary + 2).copied(),
        Some("LLM-judge calls: ≤ 29,400 → ≤ 44,100 a day, +14,700"),
        "{}",
        plan.stdout
    );
    assert!(
        recipe_text("plan.yml").contains("LLM-judge calls: 4,200 → 16,600 a day, +12,400"),
        "the recipe shows the forecast line"
    );

    // Merged: apply makes it so; the next pull request plans no changes.
    let apply = run(line(&all, "apply.yml", "apply"), &ctx);
    apply.expect(0);
    run(line(&all, "plan.yml", "plan"), &ctx).expect(0);

    // The merge is the base now (plan.yml checks out the base branch under
    // base/), and apply.yml moved the tag evalctl-applied to it, which plan.yml
    // and drift.yml check out under applied/ (--applied).
    let base = line(&all, "plan.yml", "plan")
        .env
        .get("EVALCTL_BASE_DIR")
        .expect("the base directory")
        .clone();
    let applied = line(&all, "plan.yml", "plan")
        .env
        .get("EVALCTL_APPLIED_DIR")
        .expect("the manifests as last applied")
        .clone();
    assert_eq!(
        line(&all, "drift.yml", "drift")
            .env
            .get("EVALCTL_APPLIED_DIR"),
        Some(&applied)
    );
    let record_apply = |ctx: &TestContext| {
        let _ = std::fs::remove_dir_all(ctx.path(&applied));
        // An absolute path: copied from the config repo, not the repository.
        ctx.copy_dir(&ctx.path(&dir).to_string_lossy(), &applied);
    };
    ctx.copy_dir("examples/quickstart", &base);
    record_apply(&ctx);

    // Nightly: no drift; then someone recolours a section in the UI: drift (2).
    run(line(&all, "drift.yml", "drift"), &ctx).expect(0);
    recolour_section(&ctx, "demo-project", "production", "Quality", "#ff0000");

    // A pull request that does not touch the section: its comment says that
    // applying would revert the hot-fix.
    let plan = run(line(&all, "plan.yml", "plan"), &ctx);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("### Out-of-band changes this apply would revert (1)"),
        "{}",
        plan.stdout
    );
    // One that recolours it too: a conflict, which fails the job (4).
    let manifest = ctx.path(&format!("{dir}/demo-project.yaml"));
    let original = std::fs::read_to_string(&manifest).expect("the manifest");
    ctx.write(
        &format!("{dir}/demo-project.yaml"),
        &original.replace("#1F77B4", "#2CA02C"),
    );
    let plan = run(line(&all, "plan.yml", "plan"), &ctx);
    plan.expect(4);
    assert!(
        plan.stdout.contains("### Conflicts (1)") && plan.stdout.contains("#ff0000"),
        "{}",
        plan.stdout
    );
    ctx.write(&format!("{dir}/demo-project.yaml"), &original);
    // The nightly report speaks of drift (the UI's edit of what was applied),
    // not of a conflict nor of an apply.
    let drift = run(line(&all, "drift.yml", "drift"), &ctx);
    drift.expect(2);
    fits_a_comment(&drift, "the drift issue");
    assert!(
        drift.stdout.contains("### Drift: changed out of band (1)")
            && drift.stdout.contains("section[Quality]")
            && drift.stdout.contains("#ff0000"),
        "{}",
        drift.stdout
    );
    for wrong in ["### Conflicts", "would revert", "this apply"] {
        assert!(!drift.stdout.contains(wrong), "{wrong}:\n{}", drift.stdout);
    }
    // A change merged and not applied yet is pending, beside the drift.
    ctx.write(
        &format!("{dir}/demo-project.yaml"),
        &original.replace("Toxicity and prompt-injection charts", "Safety, reviewed"),
    );
    let drift = run(line(&all, "drift.yml", "drift"), &ctx);
    drift.expect(2);
    assert!(
        drift
            .stdout
            .contains("### Pending: merged, not applied yet (1)")
            && drift.stdout.contains("### Drift: changed out of band (1)"),
        "{}",
        drift.stdout
    );

    // Applying again repairs it; the apply job records it.
    run(line(&all, "apply.yml", "apply"), &ctx).expect(0);
    record_apply(&ctx);
    run(line(&all, "drift.yml", "drift"), &ctx).expect(0);

    // A pull request that replaces a template: the saved plan says so, in
    // the field the labelling step reads.
    ctx.write(
        &format!("{dir}/demo-project.yaml"),
        &std::fs::read_to_string(&manifest)
            .expect("the manifest")
            .replace("max: 5", "max: 10"),
    );
    run(line(&all, "plan.yml", "plan"), &ctx).expect(2);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ctx.path("plan.json")).expect("plan.json"))
            .expect("JSON");
    let actions: Vec<&str> = saved["plan"]["changes"]
        .as_array()
        .expect("saved.plan.changes")
        .iter()
        .filter_map(|c| c["action"].as_str())
        .collect();
    assert_eq!(actions, ["replace"]);
    assert!(
        recipe_text("plan.yml").contains(
            "saved.plan.changes.filter(c => c.action === 'delete' || c.action === 'replace')"
        ),
        "the label step reads the saved plan's actions"
    );
    ctx.write(&format!("{dir}/demo-project.yaml"), &original);

    // What the recipes' later steps read was written by their evalctl lines.
    for recipe in RECIPES {
        for file in files_read(&recipe_text(recipe)) {
            assert!(
                ctx.path(&file).is_file(),
                "{recipe} reads {file}, which nothing wrote"
            );
        }
    }
}

#[test]
fn apply_gets_the_integration_tokens_of_the_full_example() {
    let ctx = TestContext::new();
    let secrets = secrets(&ctx.sandbox.base_url());
    let all = all_invocations(&secrets);
    let dir = config_dir(&all);
    ctx.copy_dir("examples/full", &dir);

    run(line(&all, "plan.yml", "validate"), &ctx).expect(0);
    run(line(&all, "plan.yml", "plan"), &ctx).expect(2);
    let apply = run(line(&all, "apply.yml", "apply"), &ctx);
    apply.expect(0);
    run(line(&all, "plan.yml", "plan"), &ctx).expect(0);
    run(line(&all, "drift.yml", "drift"), &ctx).expect(0);
    // apply.md goes to the job summary: no token in it, nor in the plan comment.
    for file in ["apply.md", "plan.md", "plan.json", "drift.md"] {
        let text = std::fs::read_to_string(ctx.path(file)).unwrap_or_default();
        assert!(!text.is_empty(), "{file}");
        for token in [OPENAI_TOKEN, ANTHROPIC_TOKEN, DEMO_API_KEY] {
            assert!(!text.contains(token), "{file} holds a secret");
        }
    }
}

/// The plan recipe fails on a policy of severity error: its validate line and its
/// plan line both exit 65 (which the recipe's gate turns into a failed job), at the
/// object that breaks the rule, as an annotation too; nothing is planned.
#[test]
fn the_plan_recipe_fails_on_an_error_severity_policy() {
    let ctx = TestContext::new();
    let secrets = secrets(&ctx.sandbox.base_url());
    let all = all_invocations(&secrets);
    let dir = config_dir(&all);
    ctx.copy_dir("examples/full", &dir);
    let project = format!("{dir}/demo-project.yaml");
    let original = std::fs::read_to_string(ctx.path(&project)).expect("read");
    ctx.write(
        &project,
        &original.replace("num_judges: 3", "num_judges: 5"),
    );

    let validate = run(line(&all, "plan.yml", "validate"), &ctx);
    validate.expect(65);
    assert!(
        validate.stdout.contains(&format!(
            "::error file={dir}/demo-project.yaml,line=28,col=11::scorer `correctness`"
        )),
        "{}",
        validate.all_output()
    );
    let plan = run(line(&all, "plan.yml", "plan"), &ctx);
    plan.expect(65);
    assert!(
        plan.stderr.contains("at most 3 judges per scorer"),
        "{}",
        plan.all_output()
    );
}

/// The README's "Adopt an existing setup": a service configured by hand
/// (projects, and integrations with settings) is exported into a new config
/// repo; the recipes' lines, with the recipes' environment (only the token
/// variables for apply), then run green: validate says nothing, plan has no
/// changes, apply has nothing to do, drift finds none.
#[test]
fn adopting_an_existing_setup_ends_green() {
    let ctx = TestContext::new();
    let secrets = secrets(&ctx.sandbox.base_url());
    let all = all_invocations(&secrets);
    let dir = config_dir(&all);
    // Configured by hand: an OpenAI integration with its organization, and an
    // Anthropic one.
    ctx.write(
        "by-hand/integrations.yaml",
        "kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\norganization_id: org-by-hand\n---\nkind: Integration\nprovider: anthropic\ntoken: ${ANTHROPIC_API_KEY}\n",
    );
    ctx.evalctl_with(
        &[
            ("OPENAI_API_KEY", OPENAI_TOKEN),
            ("ANTHROPIC_API_KEY", ANTHROPIC_TOKEN),
        ],
        &["apply", "by-hand", "--auto-approve"],
    )
    .expect(0);
    // The walk-through: export, with no integration variable set.
    ctx.evalctl_with(
        &[("OPENAI_API_KEY", ""), ("ANTHROPIC_API_KEY", "")],
        &["export", "--dir", &dir, "--verify"],
    )
    .expect(0);
    let integrations =
        std::fs::read_to_string(ctx.path(&format!("{dir}/integrations.yaml"))).expect("exported");
    assert!(
        integrations.contains("organization_id: org-by-hand"),
        "{integrations}"
    );

    // The pull request that adds the files: valid, no warning, no changes.
    let validate = run(line(&all, "plan.yml", "validate"), &ctx);
    validate.expect(0);
    assert!(
        !validate.stdout.contains("::warning"),
        "{}",
        validate.stdout
    );
    assert!(!validate.stdout.contains("::error"), "{}", validate.stdout);
    let plan = run(line(&all, "plan.yml", "plan"), &ctx);
    plan.expect(0);
    assert!(plan.stdout.contains("No changes"), "{}", plan.stdout);
    // (The base branch has no manifests yet: a warning names it, in case
    // of a typo; no variable is asked for.)
    assert!(!plan.stderr.contains("is not set"), "{}", plan.stderr);
    assert!(!plan.stdout.contains("Not verifiable"), "{}", plan.stdout);
    // Merged: apply has nothing to do; the next night, no drift.
    let apply = run(line(&all, "apply.yml", "apply"), &ctx);
    apply.expect(0);
    ctx.copy_dir(
        &ctx.path(&dir).to_string_lossy(),
        line(&all, "drift.yml", "drift")
            .env
            .get("EVALCTL_APPLIED_DIR")
            .expect("the manifests as last applied"),
    );
    run(line(&all, "drift.yml", "drift"), &ctx).expect(0);
    // The first integration change applies with the recipe's variables.
    ctx.write(
        &format!("{dir}/integrations.yaml"),
        &integrations.replace("org-by-hand", "org-reviewed"),
    );
    run(line(&all, "plan.yml", "plan"), &ctx).expect(2);
    let apply = run(line(&all, "apply.yml", "apply"), &ctx);
    apply.expect(0);
    run(line(&all, "plan.yml", "plan"), &ctx).expect(0);
}

/// What a step run by [`run_step`] left: its exit status, its outputs
/// (`$GITHUB_OUTPUT`) and its job summary (`$GITHUB_STEP_SUMMARY`).
struct StepRun {
    status: i32,
    outputs: BTreeMap<String, String>,
    summary: String,
    log: String,
}

/// Runs the step `step` of `recipe` as the runner would: its whole `run:`
/// script in `bash --noprofile --norc -eo pipefail`, in the config repo, with
/// the step's environment (secrets resolved; `context` for the values of the
/// run's context), `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY` and `GITHUB_SHA`,
/// and evalctl on `PATH`.
fn run_step(
    ctx: &TestContext,
    secrets: &Secrets,
    recipe: &str,
    step: &str,
    context: &[(&str, &str)],
) -> StepRun {
    let found = ci_support::steps(recipe, &recipe_text(recipe), secrets);
    let step = found
        .iter()
        .find(|s| s.name == step)
        .unwrap_or_else(|| panic!("{recipe}: no step {step:?}"));
    let files = tempfile::tempdir().expect("tempdir");
    let output = files.path().join("output");
    let summary = files.path().join("summary");
    std::fs::write(&output, "").expect("output");
    std::fs::write(&summary, "").expect("summary");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_evalctl"))
        .parent()
        .expect("the binary's directory")
        .to_owned();
    let mut command = std::process::Command::new("bash");
    command
        .args([
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            &step.script,
        ])
        .current_dir(ctx.dir.path());
    for (name, _) in std::env::vars() {
        if name.starts_with("EVALCTL_") || name.starts_with("GITHUB_") || name.ends_with("_API_KEY")
        {
            command.env_remove(name);
        }
    }
    command
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("NO_COLOR", "1")
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567");
    for (name, value) in &step.env {
        if let Some(value) = value {
            command.env(name, value);
        }
    }
    for (name, value) in context {
        command.env(name, value);
    }
    let run = command.output().expect("bash runs");
    let outputs = std::fs::read_to_string(&output)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    StepRun {
        status: run.status.code().unwrap_or(-1),
        outputs,
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        log: format!(
            "{}\n{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        ),
    }
}

/// The walk-through's last step, as GitHub would run it: the recipes' steps
/// (their whole scripts, in bash, with the `GITHUB_*` files) on an exported
/// setup: validate, plan and its gate, apply and its gate, drift, all green,
/// with their outputs and job summaries.
#[test]
fn an_exported_setup_runs_the_recipes_green() {
    let ctx = TestContext::new();
    let secrets = secrets(&ctx.sandbox.base_url());
    let all = all_invocations(&secrets);
    let dir = config_dir(&all);
    ctx.write(
        "by-hand/integrations.yaml",
        "kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\norganization_id: org-by-hand\n",
    );
    ctx.evalctl_with(
        &[("OPENAI_API_KEY", OPENAI_TOKEN)],
        &["apply", "by-hand", "--auto-approve"],
    )
    .expect(0);
    ctx.evalctl_with(
        &[("OPENAI_API_KEY", "")],
        &["export", "--dir", &dir, "--verify"],
    )
    .expect(0);
    // The checkouts the recipes make: the base branch (the same files: the
    // pull request that adds them is merged), the commit last applied.
    let copy = |to: &str| ctx.copy_dir(&ctx.path(&dir).to_string_lossy(), to);
    copy("base/config");
    copy("applied/config");

    let validate = run_step(&ctx, &secrets, "plan.yml", "Validate", &[]);
    assert_eq!(validate.status, 0, "{}", validate.log);
    assert!(!validate.log.contains("::warning"), "{}", validate.log);
    let plan = run_step(&ctx, &secrets, "plan.yml", "Plan", &[]);
    assert_eq!(plan.status, 0, "{}", plan.log);
    assert_eq!(plan.outputs.get("status").map(String::as_str), Some("0"));
    assert!(plan.summary.contains("No changes"), "{}", plan.summary);
    let gate = run_step(
        &ctx,
        &secrets,
        "plan.yml",
        "Gate on the exit status",
        &[("STATUS", "0")],
    );
    assert_eq!(gate.status, 0, "{}", gate.log);

    let apply = run_step(&ctx, &secrets, "apply.yml", "Apply", &[]);
    assert_eq!(apply.status, 0, "{}", apply.log);
    assert_eq!(apply.outputs.get("status").map(String::as_str), Some("0"));
    assert!(apply.summary.contains("evalctl"), "{}", apply.summary);
    let gate = run_step(
        &ctx,
        &secrets,
        "apply.yml",
        "Gate on the exit status",
        &[("STATUS", "0")],
    );
    assert_eq!(gate.status, 0, "{}", gate.log);

    let drift = run_step(&ctx, &secrets, "drift.yml", "Drift", &[]);
    assert_eq!(drift.status, 0, "{}", drift.log);
    assert_eq!(drift.outputs.get("status").map(String::as_str), Some("0"));
    assert!(drift.summary.contains("No drift"), "{}", drift.summary);
    for run in [&validate, &plan, &apply, &drift] {
        assert!(!run.log.contains(OPENAI_TOKEN) && !run.summary.contains(OPENAI_TOKEN));
    }
}

/// An out-of-band change: a section's colour changed in the UI.
fn recolour_section(
    ctx: &TestContext,
    project: &str,
    log_stream: &str,
    section: &str,
    colour: &str,
) {
    let client = ctx.client();
    ctx.block_on(async {
        let project = client
            .find_project_by_name(project)
            .await
            .expect("lookup")
            .expect("the project exists");
        let stream = client
            .find_log_stream_by_name(&project.id, log_stream)
            .await
            .expect("lookup")
            .expect("the log stream exists");
        let dashboard = client
            .get_dashboard(&project.id, &stream.id, None)
            .await
            .expect("read")
            .expect("the dashboard exists");
        let id = dashboard
            .sections
            .iter()
            .find(|s| s.name == section)
            .map(|s| s.id.clone())
            .expect("the section exists");
        let body = SectionUpdateRequest {
            color: Some(colour.to_owned()),
            ..Default::default()
        };
        client
            .update_section(&project.id, &stream.id, &id, None, &body)
            .await
            .expect("update");
    });
}

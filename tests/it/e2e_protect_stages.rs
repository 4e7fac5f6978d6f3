//! Protect stages as code, through the binary on the sandbox (issue 20,
//! item 4): stages are created from nothing; a second apply sends nothing;
//! a changed ruleset is exactly one replace (and a replace made out of band
//! is noticed by the version it bumped); a stage removed from the manifests
//! is only paused, with `--prune`; export round-trips; lost answers to a
//! create or a replace are settled by reading back, never sending twice
//! what landed.

use crate::e2e_support;

use e2e_support::{Run, TestContext, report};
use evalctl::plan::OutcomeStatus;
use evalctl::sandbox::kinds::protect_stages::StageRecord;
use evalctl::sandbox::{Fault, Faults};
use serde_json::json;

const REPO: &str = r#"
kind: Project
name: demo-project
protect_stages:
  - name: toxicity-guard
    description: Answers that read as toxic are replaced
    prioritized_rulesets:
      - description: toxic answers
        rules:
          - metric: toxicity
            operator: gt
            target_value: 0.5
        action:
          type: override
          choices: ["Sorry, I cannot help with that."]
          subscriptions:
            - url: https://hooks.example.com/protect
              statuses: [triggered, error]
  - name: pii
    type: central
    paused: false
    prioritized_rulesets:
      - rules:
          - metric: pii
            operator: any
            target_value: [ssn, credit_card]
        action:
          type: passthrough
"#;

/// The sandbox's stages, read out of band.
fn stages(ctx: &TestContext) -> Vec<StageRecord> {
    ctx.sandbox
        .with_state(|s| s.kinds.stages.iter().cloned().collect::<Vec<_>>())
        .expect("the sandbox's state")
}

fn stage(ctx: &TestContext, name: &str) -> StageRecord {
    let all: Vec<StageRecord> = stages(ctx).into_iter().filter(|s| s.name == name).collect();
    assert_eq!(all.len(), 1, "one stage named {name}: {all:?}");
    all.into_iter().next().unwrap_or_else(|| unreachable!())
}

/// Writes to stages: creates, replaces and pauses.
fn stage_writes(ctx: &TestContext) -> Vec<(String, String)> {
    ctx.sandbox
        .requests()
        .iter()
        .filter(|r| r.path.contains("/stages") && r.method != "GET")
        .map(|r| (r.method.clone(), r.path.clone()))
        .collect()
}

#[test]
fn created_from_nothing_then_a_second_apply_sends_nothing() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    for name in ["toxicity-guard", "pii"] {
        assert!(
            plan.stdout
                .contains(&format!("+ project[demo-project].protect_stage[{name}]")),
            "{}",
            plan.stdout
        );
    }
    // `--target` selects one stage.
    let targeted = ctx.evalctl(&[
        "plan",
        "repo",
        "--target",
        "project[demo-project].protect_stage[pii]",
    ]);
    targeted.expect(0);
    assert!(
        targeted.stdout.contains("protect_stage[pii]")
            && !targeted.stdout.contains("protect_stage[toxicity-guard]"),
        "{}",
        targeted.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let guard = stage(&ctx, "toxicity-guard");
    assert_eq!(guard.version, 1);
    assert_eq!(guard.stage_type, "local");
    assert_eq!(
        guard.description.as_deref(),
        Some("Answers that read as toxic are replaced")
    );
    assert_eq!(
        guard.prioritized_rulesets,
        vec![json!({
            "description": "toxic answers",
            "rules": [{"metric": "toxicity", "operator": "gt", "target_value": 0.5}],
            "action": {"type": "OVERRIDE", "choices": ["Sorry, I cannot help with that."],
                       "subscriptions": [{"url": "https://hooks.example.com/protect",
                                          "statuses": ["triggered", "error"]}]},
        })]
    );
    let pii = stage(&ctx, "pii");
    assert_eq!((pii.stage_type.as_str(), pii.paused), ("central", false));
    assert_eq!(pii.prioritized_rulesets[0]["action"]["type"], "PASSTHROUGH");

    // Re-apply: nothing to do, nothing sent, no version bump.
    let before = stage_writes(&ctx).len();
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(stage_writes(&ctx).len(), before, "{:?}", stage_writes(&ctx));
    assert_eq!(stage(&ctx, "toxicity-guard").version, 1);
    assert_eq!(stages(&ctx).len(), 2);
}

#[test]
fn a_changed_ruleset_is_one_replace_and_an_out_of_band_replace_is_noticed() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.write(
        "repo/project.yaml",
        &REPO.replace("target_value: 0.5", "target_value: 0.7"),
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("~ project[demo-project].protect_stage[toxicity-guard]"),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("0.5 → 0.7"), "{}", plan.stdout);
    assert!(
        !plan.stdout.contains("protect_stage[pii]"),
        "{}",
        plan.stdout
    );
    let before = stage_writes(&ctx);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let sent: Vec<_> = stage_writes(&ctx).split_off(before.len());
    let id = stage(&ctx, "toxicity-guard").id;
    assert_eq!(
        sent,
        vec![(
            "POST".to_owned(),
            format!("/v2/projects/{}/stages/{id}", ctx.demo_project_id())
        )],
        "one replace, nothing else"
    );
    let guard = stage(&ctx, "toxicity-guard");
    assert_eq!(guard.version, 2);
    assert_eq!(
        guard.prioritized_rulesets[0]["rules"][0]["target_value"],
        0.7
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // Someone replaces the rulesets in the service: the version moves, so
    // evalctl no longer knows them and puts the declared ones back, once.
    let project_id = ctx.demo_project_id();
    ctx.sandbox
        .with_state(|s| {
            s.replace_stage_rulesets(&project_id, &id, vec![json!({"rules": []})])
                .map(drop)
        })
        .expect("the sandbox's state")
        .expect("replaced out of band");
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout.contains("someone replaced them since"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let guard = stage(&ctx, "toxicity-guard");
    assert_eq!(guard.version, 4);
    assert_eq!(
        guard.prioritized_rulesets[0]["rules"][0]["target_value"],
        0.7
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_stage_removed_from_the_manifests_is_only_paused_with_prune() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let only_guard = &REPO[..REPO.find("  - name: pii").expect("pii")];
    ctx.write("repo/project.yaml", only_guard);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode", "-o", "json"]);
    plan.expect(0);
    assert!(
        plan.stdout.contains("--prune pauses it"),
        "the plan says what --prune does: {}",
        plan.stdout
    );
    let text = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    text.expect(0);
    assert!(
        !text.stdout.contains("deleted only with --prune")
            && text
                .stdout
                .contains("protect_stage[pii]: Protect stage `pii` exists but is not declared; the service cannot delete a stage, so --prune pauses it"),
        "the text plan does not call the stage deletable: {}",
        text.stdout
    );
    let pruned = ctx.evalctl(&["plan", "repo", "--prune", "--detailed-exitcode"]);
    pruned.expect(2);
    assert!(
        pruned
            .stdout
            .contains("~ project[demo-project].protect_stage[pii]")
            && pruned
                .stdout
                .contains("cannot delete a stage, so it is paused"),
        "{}",
        pruned.stdout
    );
    ctx.evalctl(&["apply", "repo", "--prune", "--auto-approve"])
        .expect(0);
    let pii = stage(&ctx, "pii");
    assert!(pii.paused, "paused, not deleted");
    assert_eq!(pii.version, 1, "its rulesets untouched");
    assert_eq!(stages(&ctx).len(), 2);
    ctx.evalctl(&["plan", "repo", "--prune", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn export_round_trips() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["export", "--project", "demo-project", "--dir", "exported"])
        .expect(0);
    let exported = std::fs::read_to_string(ctx.path("exported/demo-project.yaml"))
        .expect("the export of demo-project");
    assert!(exported.contains("protect_stages:"), "{exported}");
    assert!(exported.contains("name: toxicity-guard"), "{exported}");
    assert!(exported.contains("target_value: 0.5"), "{exported}");
    assert!(exported.contains("type: central"), "{exported}");
    assert!(exported.contains("type: override"), "{exported}");
    ctx.evalctl(&["plan", "exported", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn lost_answers_to_a_create_or_a_replace_are_settled_without_sending_twice() {
    for (seed, drop_after) in [(1, true), (2, false)] {
        let ctx = TestContext::new();
        ctx.write("repo/project.yaml", REPO);
        // Every POST to stages is processed, then its answer is lost (a
        // dropped connection, or a 5xx).
        let lose_posts = || Faults {
            fail_after_rate: if drop_after { 0.0 } else { 1.0 },
            drop_after_rate: if drop_after { 1.0 } else { 0.0 },
            seed,
            path_contains: Some("/stages".into()),
            method: Some("POST".into()),
            ..Faults::none()
        };
        ctx.faults(lose_posts());
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
        assert_eq!(run.status, 0, "{}", run.all_output());
        let r = report(&run);
        assert_eq!(r.outcomes.len(), 2);
        for o in &r.outcomes {
            assert_eq!(o.status, OutcomeStatus::Succeeded, "{}", run.all_output());
            let detail = o.detail.as_deref().unwrap_or_default();
            assert!(
                detail.contains("a re-read found the Protect stage, so it was created once"),
                "{}: {detail}",
                o.address
            );
        }
        let hits = ctx
            .sandbox
            .requests()
            .iter()
            .filter(|r| matches!(r.fault, Some(Fault::FailAfter(_) | Fault::DropAfter)))
            .count();
        assert_eq!(hits, 2, "each create sent once, its answer lost");
        ctx.faults(Faults::none());
        assert_eq!(stages(&ctx).len(), 2, "one stage per declaration");
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);

        // A replace whose answer is lost: the bumped version says it landed.
        ctx.write(
            "repo/project.yaml",
            &REPO.replace("target_value: 0.5", "target_value: 0.9"),
        );
        ctx.faults(lose_posts());
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
        assert_eq!(run.status, 0, "{}", run.all_output());
        let r = report(&run);
        let detail = r.outcomes[0].detail.as_deref().unwrap_or_default();
        assert!(
            detail.contains("so the rulesets were replaced once"),
            "{detail}"
        );
        ctx.faults(Faults::none());
        let guard = stage(&ctx, "toxicity-guard");
        assert_eq!(guard.version, 2, "replaced once");
        assert_eq!(
            guard.prioritized_rulesets[0]["rules"][0]["target_value"],
            0.9
        );
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
}

#[test]
fn a_saved_plan_is_checked_applied_once_and_refused_when_the_stage_moved() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.write(
        "repo/project.yaml",
        &REPO.replace("target_value: 0.5", "target_value: 0.6"),
    );
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"])
        .expect(0);
    assert_eq!(stage(&ctx, "toxicity-guard").version, 2);
    // Applied again: live holds what it sets, nothing is sent.
    let before = stage_writes(&ctx).len();
    let again = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    again.expect(0);
    assert!(
        again.all_output().contains("was already applied"),
        "{}",
        again.all_output()
    );
    assert_eq!(stage_writes(&ctx).len(), before);

    // A plan whose stage was replaced out of band since is refused.
    ctx.write(
        "repo/project.yaml",
        &REPO.replace("target_value: 0.5", "target_value: 0.65"),
    );
    ctx.evalctl(&["plan", "repo", "--out", "stale.json"])
        .expect(0);
    let project_id = ctx.demo_project_id();
    let id = stage(&ctx, "toxicity-guard").id;
    ctx.sandbox
        .with_state(|s| {
            s.replace_stage_rulesets(&project_id, &id, vec![json!({"rules": []})])
                .map(drop)
        })
        .expect("the sandbox's state")
        .expect("replaced out of band");
    let stale = ctx.evalctl(&["apply", "--plan", "stale.json", "--auto-approve"]);
    assert_ne!(stale.status, 0, "{}", stale.all_output());
    assert!(
        stale.all_output().contains("protect_stage[toxicity-guard]"),
        "{}",
        stale.all_output()
    );
    assert_eq!(stage(&ctx, "toxicity-guard").version, 3, "nothing sent");
}

#[test]
fn three_way_plans_attribute_a_ruleset_change_to_the_pull_request_or_to_drift() {
    let ctx = TestContext::new();
    ctx.write("base/project.yaml", REPO);
    ctx.evalctl(&["apply", "base", "--auto-approve"]).expect(0);
    ctx.write(
        "pr/project.yaml",
        &REPO.replace("target_value: 0.5", "target_value: 0.7"),
    );
    let attribution = |run: &Run| -> Vec<String> {
        let doc: serde_json::Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{e}\n{}", run.all_output()));
        doc["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c["address"]["name"].as_str().unwrap_or("?"),
                    c["attribution"].as_str().unwrap_or("-")
                )
            })
            .collect()
    };
    let run = ctx.evalctl(&["plan", "pr", "--base", "base", "-o", "json"]);
    run.expect(0);
    assert_eq!(attribution(&run), vec!["toxicity-guard proposed"]);
    // The pii stage's rulesets replaced out of band: the base and the pull
    // request both put them back, which is drift, not the pull request's.
    let project_id = ctx.demo_project_id();
    let pii = stage(&ctx, "pii").id;
    ctx.sandbox
        .with_state(|s| {
            s.replace_stage_rulesets(&project_id, &pii, vec![json!({"rules": []})])
                .map(drop)
        })
        .expect("the sandbox's state")
        .expect("replaced out of band");
    let run = ctx.evalctl(&["plan", "pr", "--base", "base", "-o", "json"]);
    run.expect(0);
    assert_eq!(
        attribution(&run),
        vec!["pii drift", "toxicity-guard proposed"]
    );
}

#[test]
fn a_hostile_stage_name_is_created_once_and_read_back_by_its_exact_name() {
    let ctx = TestContext::new();
    // `]` (the address's quote), a query's `&`, `?`, `=` and `#`, an escape
    // sequence: the name goes in a query string and on the terminal.
    let name = "a]b \u{1b}[31mred & ?x=1#frag";
    ctx.write(
        "repo/project.yaml",
        &format!(
            "kind: Project\nname: demo-project\nprotect_stages:\n  - name: {}\n    paused: true\n",
            serde_json::to_string(name).expect("JSON is YAML")
        ),
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    plan.expect(0);
    assert!(
        !plan.stdout.contains('\u{1b}'),
        "no raw escape reaches the terminal: {:?}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let made = stage(&ctx, name);
    assert!(made.paused);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(stages(&ctx).len(), 1);
}

/// A stage whose webhook URL is taken from the environment.
const FROM_ENV: &str = r#"
kind: Project
name: demo-project
protect_stages:
  - name: hooked
    prioritized_rulesets:
      - rules:
          - metric: toxicity
            operator: gt
            target_value: 0.5
        action:
          type: passthrough
          subscriptions:
            - url: ${HOOK_URL}
"#;

const HOOK: &str = "https://hooks.slack.com/services/T0001/B0002/hook-secret-4f9a8c7e";
const HOOK_ROTATED: &str = "https://hooks.slack.com/services/T0001/B0002/hook-rotated-77d1e0";

/// Every file below the test's directory, as text (plan files, the record,
/// exports): none may hold the URL.
fn files_holding(ctx: &TestContext, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![ctx.path("")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn a_webhook_url_from_the_environment_is_sent_but_never_shown_and_a_new_value_is_a_change() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", FROM_ENV);
    let env = [("HOOK_URL", HOOK)];
    let mut outputs = Vec::new();
    for format in ["text", "json", "markdown"] {
        let plan = ctx.evalctl_with(&env, &["plan", "repo", "-o", format, "-vv"]);
        plan.expect(0);
        assert!(plan.stdout.contains("${HOOK_URL}"), "{}", plan.stdout);
        outputs.push(plan.all_output());
    }
    ctx.evalctl_with(&env, &["plan", "repo", "--out", "plan.json"])
        .expect(0);
    // Without the variable, apply refuses before any write.
    let refused = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    assert_eq!(refused.status, 1, "{}", refused.all_output());
    assert!(
        refused
            .all_output()
            .contains("HOOK_URL (for project[demo-project].protect_stage[hooked])"),
        "{}",
        refused.all_output()
    );
    assert!(stages(&ctx).iter().all(|s| s.name != "hooked"));
    let apply = ctx.evalctl_with(
        &env,
        &["apply", "--plan", "plan.json", "--auto-approve", "-vv"],
    );
    apply.expect(0);
    outputs.push(apply.all_output());
    // The service got the value.
    let hooked = stage(&ctx, "hooked");
    assert_eq!(
        hooked.prioritized_rulesets[0]["action"]["subscriptions"][0]["url"],
        HOOK
    );
    // The same value again: nothing to do.
    let again = ctx.evalctl_with(&env, &["plan", "repo", "--detailed-exitcode"]);
    again.expect(0);
    outputs.push(again.all_output());
    // A new value is a change, shown as written.
    let rotated = [("HOOK_URL", HOOK_ROTATED)];
    let plan = ctx.evalctl_with(&rotated, &["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("~ project[demo-project].protect_stage[hooked]"),
        "{}",
        plan.stdout
    );
    outputs.push(plan.all_output());
    let apply = ctx.evalctl_with(&rotated, &["apply", "repo", "--auto-approve"]);
    apply.expect(0);
    outputs.push(apply.all_output());
    assert_eq!(
        stage(&ctx, "hooked").prioritized_rulesets[0]["action"]["subscriptions"][0]["url"],
        HOOK_ROTATED
    );
    ctx.evalctl_with(&rotated, &["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    // Export writes the reference, and plans empty.
    let export = ctx.evalctl_with(
        &rotated,
        &["export", "--dir", "exported", "--project", "demo-project"],
    );
    export.expect(0);
    outputs.push(export.all_output());
    let exported =
        std::fs::read_to_string(ctx.path("exported/demo-project.yaml")).unwrap_or_default();
    assert!(exported.contains("${HOOK_URL}"), "{exported}");
    for secret in [HOOK, HOOK_ROTATED] {
        for output in &outputs {
            assert!(
                !output.contains(secret),
                "an output shows the URL:\n{output}"
            );
        }
        assert_eq!(
            files_holding(&ctx, secret),
            Vec::<String>::new(),
            "files hold the URL"
        );
    }
}

//! Global prompt templates as code (`kind: PromptTemplate`, issue 20, item
//! 2), through the binary on the sandbox: created from nothing; a second
//! apply creates nothing; a one-word change creates exactly one version and
//! the plan shows its diff; a pinned selection holds; `--prune` deletes an
//! undeclared global template only when the repo has a PromptTemplate
//! document; a version's create whose answer is lost is settled without a
//! second version; two documents of one name are refused.

use crate::e2e_support;

use e2e_support::TestContext;
use evalctl::kinds::prompt_templates::wire::{PromptTemplateCreate, PromptTemplateWire};
use evalctl::sandbox::{Fault, Faults};

const GREETING: &str = r#"
kind: PromptTemplate
name: greeting
template: |
  Greet {name} warmly.
  Keep it short.
settings:
  model_alias: gpt-4.1-mini
"#;

const TRIAGE: &str = r#"
kind: PromptTemplate
name: triage
template:
  - role: system
    content: Classify the ticket as bug, question or request.
  - role: user
    content: "{ticket}"
"#;

/// The global templates, read out of band.
fn templates(ctx: &TestContext) -> Vec<PromptTemplateWire> {
    let client = ctx.client();
    ctx.block_on(async {
        client
            .list_prompt_templates(None)
            .await
            .expect("the global templates are listed")
    })
}

fn template(ctx: &TestContext, name: &str) -> PromptTemplateWire {
    templates(ctx)
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("global template {name} exists"))
}

/// Creates a global template out of band (not declared by the repo).
fn create_unmanaged(ctx: &TestContext, name: &str) {
    let client = ctx.client();
    let body: PromptTemplateCreate = serde_json::from_value(serde_json::json!({
        "name": name,
        "template": "made by hand",
        "settings": {}
    }))
    .expect("a body");
    ctx.block_on(async {
        client
            .create_prompt_template(None, &body)
            .await
            .expect("created out of band")
    });
}

fn posts(ctx: &TestContext) -> usize {
    ctx.sandbox
        .requests()
        .iter()
        .filter(|r| {
            r.method == "POST" && r.path.starts_with("/v2/templates") && !r.path.ends_with("/query")
        })
        .count()
}

#[test]
fn created_from_nothing_a_second_apply_creates_nothing_and_a_one_word_change_is_one_version() {
    let ctx = TestContext::new();
    ctx.write("repo/greeting.yaml", GREETING);
    ctx.write("repo/triage.yaml", TRIAGE);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    for address in ["+ prompt_template[greeting]", "+ prompt_template[triage]"] {
        assert!(plan.stdout.contains(address), "{}", plan.stdout);
    }
    assert!(!plan.stdout.contains("project["), "{}", plan.stdout);
    // `--target` selects one global template.
    let targeted = ctx.evalctl(&["plan", "repo", "--target", "prompt_template[triage]"]);
    targeted.expect(0);
    assert!(
        targeted.stdout.contains("prompt_template[triage]")
            && !targeted.stdout.contains("prompt_template[greeting]"),
        "{}",
        targeted.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let greeting = template(&ctx, "greeting");
    assert_eq!(
        (greeting.max_version, greeting.selected_version.version),
        (1, 1)
    );
    assert_eq!(
        greeting.selected_version.settings.get("model_alias"),
        Some(&serde_json::json!("gpt-4.1-mini"))
    );
    assert_eq!(template(&ctx, "triage").max_version, 1);

    // A second apply: nothing to do, nothing sent.
    let before = posts(&ctx);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(posts(&ctx), before);

    // One word changed: exactly one version, the plan showing the diff.
    ctx.write("repo/greeting.yaml", &GREETING.replace("warmly", "kindly"));
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("+ prompt_template[greeting].version[2]"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("-Greet {name} warmly.")
            && plan.stdout.contains("+Greet {name} kindly."),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let greeting = template(&ctx, "greeting");
    assert_eq!(
        (greeting.max_version, greeting.selected_version.version),
        (2, 2)
    );
    assert_eq!(template(&ctx, "triage").max_version, 1);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_pinned_selection_holds_while_a_version_is_created() {
    let ctx = TestContext::new();
    ctx.write("repo/greeting.yaml", GREETING);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.write(
        "repo/greeting.yaml",
        &format!(
            "{}selected_version: 1\n",
            GREETING.replace("warmly", "kindly")
        ),
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let greeting = template(&ctx, "greeting");
    assert_eq!(
        (greeting.max_version, greeting.selected_version.version),
        (2, 1)
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn prune_deletes_an_undeclared_global_template_only_when_a_prompt_template_document_exists() {
    let ctx = TestContext::new();
    create_unmanaged(&ctx, "by-hand");
    // A repo without a PromptTemplate document leaves global templates alone.
    ctx.write("repo/project.yaml", "kind: Project\nname: demo-project\n");
    let plan = ctx.evalctl(&["plan", "repo", "--prune"]);
    assert!(
        !plan.stdout.contains("prompt_template[by-hand]"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve", "--prune"])
        .expect(0);
    template(&ctx, "by-hand");

    // With one, an undeclared global template is unmanaged: a note without
    // --prune, a delete with it.
    ctx.write("repo/greeting.yaml", GREETING);
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert!(
        plan.stdout.contains("Unmanaged (live, not declared; deleted only with --prune):\n  * prompt_template[by-hand]"),
        "{}",
        plan.all_output()
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    template(&ctx, "by-hand");
    let plan = ctx.evalctl(&["plan", "repo", "--prune"]);
    assert!(
        plan.stdout.contains("- prompt_template[by-hand]"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve", "--prune"])
        .expect(0);
    let names: Vec<String> = templates(&ctx).into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["greeting"]);
}

#[test]
fn a_lost_answer_to_a_version_create_is_settled_without_a_second_version() {
    // The global listing is a POST too (`/v2/templates/query`), so the
    // faults aim at the version's create alone (`…/versions`).
    for (seed, drop_after) in [(1, true), (2, false)] {
        let ctx = TestContext::new();
        ctx.write("repo/greeting.yaml", GREETING);
        ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
        ctx.write("repo/greeting.yaml", &GREETING.replace("warmly", "kindly"));
        ctx.faults(Faults {
            fail_after_rate: if drop_after { 0.0 } else { 1.0 },
            drop_after_rate: if drop_after { 1.0 } else { 0.0 },
            seed,
            path_contains: Some("/versions".into()),
            method: Some("POST".into()),
            ..Faults::none()
        });
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
        assert_eq!(run.status, 0, "{}", run.all_output());
        assert!(
            run.all_output()
                .contains("a re-read found the prompt template version"),
            "{}",
            run.all_output()
        );
        let hits = ctx
            .sandbox
            .requests()
            .iter()
            .filter(|r| matches!(r.fault, Some(Fault::FailAfter(_) | Fault::DropAfter)))
            .count();
        assert_eq!(hits, 1, "the fault hit the one version create");
        ctx.faults(Faults::none());
        let greeting = template(&ctx, "greeting");
        assert_eq!(greeting.max_version, 2, "one version, not two");
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
}

#[test]
fn a_lost_answer_to_a_template_create_is_settled_without_a_second_template() {
    // `POST /v2/templates` creates; `POST /v2/templates/query` lists: the
    // faults aim at the exact path, so the listing that settles is answered.
    for (seed, drop_after) in [(3, true), (4, false)] {
        let ctx = TestContext::new();
        ctx.write("repo/greeting.yaml", GREETING);
        ctx.faults(Faults {
            fail_after_rate: if drop_after { 0.0 } else { 1.0 },
            drop_after_rate: if drop_after { 1.0 } else { 0.0 },
            fail_statuses: if drop_after { vec![] } else { vec![500] },
            seed,
            path_contains: Some("/v2/templates$".into()),
            method: Some("POST".into()),
            ..Faults::none()
        });
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
        assert_eq!(run.status, 0, "{}", run.all_output());
        let hits = ctx
            .sandbox
            .requests()
            .iter()
            .filter(|r| matches!(r.fault, Some(Fault::FailAfter(_) | Fault::DropAfter)))
            .count();
        assert_eq!(
            hits, 1,
            "the fault hit the one create, which was not sent again"
        );
        ctx.faults(Faults::none());
        let all = templates(&ctx);
        assert_eq!(all.len(), 1, "one template, not two: {all:?}");
        assert_eq!(all[0].max_version, 1);
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
}

#[test]
fn two_documents_of_one_name_are_an_error() {
    let ctx = TestContext::new();
    ctx.write("repo/a.yaml", GREETING);
    ctx.write("repo/b.yaml", GREETING);
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert_ne!(plan.status, 0, "{}", plan.all_output());
    assert!(
        plan.all_output()
            .contains("a second PromptTemplate document named `greeting`"),
        "{}",
        plan.all_output()
    );
    assert!(templates(&ctx).is_empty());
}

#[test]
fn export_writes_one_file_of_global_templates_that_round_trips() {
    let ctx = TestContext::new();
    ctx.write("repo/greeting.yaml", GREETING);
    ctx.write("repo/triage.yaml", TRIAGE);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    // A pinned selection is exported as the number.
    ctx.write(
        "repo/greeting.yaml",
        &format!(
            "{}selected_version: 1\n",
            GREETING.replace("warmly", "kindly")
        ),
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let run = ctx.evalctl(&["export", "--dir", "exported", "--verify"]);
    run.expect(0);
    assert!(
        run.all_output().contains("2 global prompt templates"),
        "{}",
        run.all_output()
    );
    let exported = std::fs::read_to_string(ctx.path("exported/prompt-templates.yaml"))
        .expect("the global templates' file");
    assert_eq!(
        exported.matches("kind: PromptTemplate").count(),
        2,
        "{exported}"
    );
    for expected in [
        "name: greeting",
        "Greet {name} kindly.",
        "model_alias: gpt-4.1-mini",
        "selected_version: 1",
        "name: triage",
        "Classify the ticket as bug, question or request.",
    ] {
        assert!(exported.contains(expected), "{expected}\n{exported}");
    }
    ctx.evalctl(&["plan", "exported", "--detailed-exitcode"])
        .expect(0);
    // Planned on its own, the file is the whole truth of global templates.
    let only = ctx.evalctl(&[
        "plan",
        "exported/prompt-templates.yaml",
        "--prune",
        "--detailed-exitcode",
    ]);
    only.expect(0);
}

#[test]
fn a_template_file_beside_the_document_is_the_template_and_a_missing_one_is_an_error() {
    let ctx = TestContext::new();
    ctx.write("repo/prompts/greeting.txt", "Greet {name} warmly.\n");
    ctx.write(
        "repo/greeting.yaml",
        "kind: PromptTemplate\nname: greeting\ntemplate_file: prompts/greeting.txt\n",
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(
        template(&ctx, "greeting").selected_version.template,
        serde_json::from_value(serde_json::json!("Greet {name} warmly.\n")).expect("a text")
    );
    ctx.write(
        "repo/greeting.yaml",
        "kind: PromptTemplate\nname: greeting\ntemplate_file: prompts/missing.txt\n",
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert_ne!(plan.status, 0, "{}", plan.all_output());
    assert!(
        plan.all_output().contains("greeting.yaml:3:")
            && plan.all_output().contains("prompts/missing.txt"),
        "{}",
        plan.all_output()
    );
}

#[test]
fn a_saved_plan_applies_once_and_applied_again_creates_nothing() {
    let ctx = TestContext::new();
    ctx.write("repo/greeting.yaml", GREETING);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.write("repo/greeting.yaml", &GREETING.replace("warmly", "kindly"));
    ctx.write("repo/triage.yaml", TRIAGE);
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let first = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    assert_eq!(first.status, 0, "{}", first.all_output());
    let sent = posts(&ctx);
    assert_eq!(template(&ctx, "greeting").max_version, 2);
    // The same saved plan again: the global templates read back as applied.
    let again = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    again.expect(0);
    assert!(
        again.all_output().contains("was already applied"),
        "{}",
        again.all_output()
    );
    assert_eq!(posts(&ctx), sent, "{}", again.all_output());
    assert_eq!(template(&ctx, "greeting").max_version, 2);
    assert_eq!(
        templates(&ctx)
            .iter()
            .filter(|t| t.name == "triage")
            .count(),
        1
    );
}

#[test]
fn pruning_most_global_templates_is_a_mass_change_apply_refuses() {
    let ctx = TestContext::new();
    for i in 0..8 {
        create_unmanaged(&ctx, &format!("by-hand-{i}"));
    }
    ctx.write("repo/greeting.yaml", GREETING);
    let refused = ctx.evalctl(&["apply", "repo", "--auto-approve", "--prune"]);
    assert_ne!(refused.status, 0, "{}", refused.all_output());
    assert!(
        refused.all_output().contains("--allow-mass-changes"),
        "{}",
        refused.all_output()
    );
    assert_eq!(templates(&ctx).len(), 8, "nothing deleted");
    ctx.evalctl(&[
        "apply",
        "repo",
        "--auto-approve",
        "--prune",
        "--allow-mass-changes",
    ])
    .expect(0);
    let names: Vec<String> = templates(&ctx).into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["greeting"]);
}

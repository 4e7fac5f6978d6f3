//! Prompt templates as code, through the binary on the sandbox (issue 20,
//! item 2): a template is created with its first version; a second apply
//! creates nothing; a one-word change creates exactly one version and the
//! plan shows its diff; a pinned selection holds while a version is
//! created; export round-trips; a create whose answer is lost is settled by
//! reading back, never making a second version.

use crate::e2e_support;

use e2e_support::{TestContext, report};
use evalctl::kinds::prompt_templates::wire::PromptTemplateWire;
use evalctl::plan::OutcomeStatus;
use evalctl::sandbox::{Fault, Faults};

const REPO: &str = r#"
kind: Project
name: demo-project
prompt_templates:
  - name: support-answer
    template:
      - role: system
        content: |
          You are a support agent for Acme.
          Answer briefly and politely.
      - role: user
        content: "{question}"
  - name: triage
    template: |
      Classify the ticket below as bug, question or request.
      Ticket: {ticket}
    settings:
      model_alias: gpt-4.1-mini
      temperature: 0.2
"#;

/// The fixture's templates of `demo-project`, read out of band.
fn templates(ctx: &TestContext) -> Vec<PromptTemplateWire> {
    let project_id = ctx.demo_project_id();
    let client = ctx.client();
    ctx.block_on(async {
        client
            .list_prompt_templates(Some(&project_id))
            .await
            .expect("the templates are listed")
    })
}

fn template(ctx: &TestContext, name: &str) -> PromptTemplateWire {
    templates(ctx)
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("template {name} exists"))
}

fn version_creates(ctx: &TestContext) -> usize {
    ctx.sandbox
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/versions"))
        .count()
}

#[test]
fn created_from_nothing_then_a_second_apply_creates_nothing() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("+ project[demo-project].prompt_template[triage]"),
        "{}",
        plan.stdout
    );
    // support-answer exists (version 2, messages): its system message
    // differs, so one version is created, with a diff of the text.
    assert!(
        plan.stdout
            .contains("+ project[demo-project].prompt_template[support-answer].version[3]"),
        "{}",
        plan.stdout
    );
    // `--target` selects one template.
    let targeted = ctx.evalctl(&[
        "plan",
        "repo",
        "--target",
        "project[demo-project].prompt_template[triage]",
    ]);
    targeted.expect(0);
    assert!(
        targeted.stdout.contains("prompt_template[triage]")
            && !targeted.stdout.contains("prompt_template[support-answer]"),
        "{}",
        targeted.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let triage = template(&ctx, "triage");
    assert_eq!(triage.max_version, 1);
    assert_eq!(triage.selected_version.version, 1);
    assert_eq!(
        triage.selected_version.settings.get("model_alias"),
        Some(&serde_json::json!("gpt-4.1-mini"))
    );
    let support = template(&ctx, "support-answer");
    assert_eq!(support.max_version, 3);
    assert_eq!(support.selected_version.version, 3);

    // Re-apply: nothing to do, no version bump.
    let before = version_creates(&ctx);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(version_creates(&ctx), before);
    assert_eq!(template(&ctx, "support-answer").max_version, 3);
    assert_eq!(template(&ctx, "triage").max_version, 1);
}

#[test]
fn a_one_word_change_creates_exactly_one_version_and_the_plan_shows_its_diff() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.write(
        "repo/project.yaml",
        &REPO.replace("Answer briefly and politely.", "Answer briefly and kindly."),
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("+ project[demo-project].prompt_template[support-answer].version[4]"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("-Answer briefly and politely.")
            && plan.stdout.contains("+Answer briefly and kindly."),
        "the plan shows a unified diff of the template:\n{}",
        plan.stdout
    );
    assert!(
        !plan.stdout.contains("prompt_template[triage]"),
        "{}",
        plan.stdout
    );
    let before = version_creates(&ctx);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(version_creates(&ctx), before + 1);
    let support = template(&ctx, "support-answer");
    assert_eq!(support.max_version, 4);
    assert_eq!(support.selected_version.version, 4);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_pinned_selection_holds_while_a_version_is_created() {
    let ctx = TestContext::new();
    let pinned = REPO.replace(
        "  - name: support-answer\n",
        "  - name: support-answer\n    selected_version: 2\n",
    );
    ctx.write("repo/project.yaml", &pinned);
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert!(
        plan.stdout.contains("version 2 stays selected"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let support = template(&ctx, "support-answer");
    assert_eq!(support.max_version, 3, "the new version is created");
    assert_eq!(support.selected_version.version, 2, "the pin holds");
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // Moving the pin is an update, and creates no version.
    ctx.write(
        "repo/project.yaml",
        &pinned.replace("selected_version: 2", "selected_version: 3"),
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert!(
        plan.stdout
            .contains("~ project[demo-project].prompt_template[support-answer]"),
        "{}",
        plan.stdout
    );
    let before = version_creates(&ctx);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(version_creates(&ctx), before);
    let support = template(&ctx, "support-answer");
    assert_eq!(
        (support.max_version, support.selected_version.version),
        (3, 3)
    );

    // A version that does not exist is an error at the manifest's field.
    ctx.write(
        "repo/project.yaml",
        &pinned.replace("selected_version: 2", "selected_version: 9"),
    );
    let plan = ctx.evalctl(&["plan", "repo"]);
    assert_ne!(plan.status, 0);
    assert!(
        plan.all_output().contains("has no version 9"),
        "{}",
        plan.all_output()
    );
}

#[test]
fn export_round_trips() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["export", "--dir", "exported", "--verify"])
        .expect(0);
    let exported = std::fs::read_to_string(ctx.path("exported/demo-project.yaml"))
        .expect("the export of demo-project");
    assert!(exported.contains("prompt_templates:"), "{exported}");
    assert!(
        exported.contains("Answer briefly and politely."),
        "{exported}"
    );
    assert!(exported.contains("model_alias: gpt-4.1-mini"), "{exported}");
    ctx.evalctl(&["plan", "exported", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_lost_answer_to_a_version_create_is_settled_without_a_second_version() {
    for (seed, drop_after) in [(1, true), (2, false)] {
        let ctx = TestContext::new();
        ctx.write("repo/project.yaml", REPO);
        // Every POST of a template or a version is processed, then its
        // answer is lost (a dropped connection, or a 5xx).
        ctx.faults(Faults {
            fail_after_rate: if drop_after { 0.0 } else { 1.0 },
            drop_after_rate: if drop_after { 1.0 } else { 0.0 },
            seed,
            path_contains: Some("/templates".into()),
            method: Some("POST".into()),
            ..Faults::none()
        });
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
        let r = report(&run);
        assert_eq!(run.status, 0, "{}", run.all_output());
        for o in &r.outcomes {
            assert_eq!(o.status, OutcomeStatus::Succeeded, "{}", run.all_output());
            let detail = o.detail.as_deref().unwrap_or_default();
            assert!(
                detail.contains("a re-read found the prompt template"),
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
        assert!(hits >= 2, "the fault never hit");
        ctx.faults(Faults::none());
        assert_eq!(version_creates(&ctx), 1, "one version create was sent");
        assert_eq!(template(&ctx, "support-answer").max_version, 3);
        assert_eq!(template(&ctx, "triage").max_version, 1);
        assert_eq!(
            templates(&ctx)
                .iter()
                .filter(|t| t.name == "triage")
                .count(),
            1
        );
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
}

#[test]
fn a_template_file_beside_the_manifest_is_the_template_and_a_missing_one_is_an_error_at_its_line() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/prompts/triage.txt",
        "Classify the ticket below as bug, question or request.\nTicket: {ticket}\n",
    );
    let manifest = "kind: Project\nname: demo-project\nprompt_templates:\n  - name: triage\n    template_file: prompts/triage.txt\n";
    ctx.write("repo/project.yaml", manifest);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let triage = template(&ctx, "triage");
    assert_eq!(
        triage.selected_version.template,
        evalctl::kinds::prompt_templates::wire::PromptText::Text(
            "Classify the ticket below as bug, question or request.\nTicket: {ticket}\n".into()
        )
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // One word changed in the file: one version, its diff in the plan.
    ctx.write(
        "repo/prompts/triage.txt",
        "Classify the ticket below as bug, question or feature.\nTicket: {ticket}\n",
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout.contains("prompt_template[triage].version[2]")
            && plan
                .stdout
                .contains("+Classify the ticket below as bug, question or feature."),
        "{}",
        plan.stdout
    );

    ctx.write(
        "repo/project.yaml",
        &manifest.replace("prompts/triage.txt", "prompts/missing.txt"),
    );
    let run = ctx.evalctl(&["validate", "repo"]);
    assert_eq!(run.status, 65, "{}", run.all_output());
    assert!(
        run.all_output().contains("project.yaml:5:20")
            && run.all_output().contains("prompts/missing.txt"),
        "{}",
        run.all_output()
    );
}

#[test]
fn a_saved_plan_applies_once_and_applied_again_creates_no_second_version() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", REPO);
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let first = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    assert_eq!(first.status, 0, "{}", first.all_output());
    assert_eq!(version_creates(&ctx), 1);
    assert_eq!(template(&ctx, "support-answer").max_version, 3);
    // The same saved plan again: it reads back as applied (the prompt
    // templates' changes are observed like any other), and nothing is sent.
    let again = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    again.expect(0);
    assert!(
        again.all_output().contains("was already applied"),
        "{}",
        again.all_output()
    );
    assert_eq!(version_creates(&ctx), 1, "{}", again.all_output());
    assert_eq!(template(&ctx, "support-answer").max_version, 3);
    assert_eq!(
        templates(&ctx)
            .iter()
            .filter(|t| t.name == "triage")
            .count(),
        1
    );
}

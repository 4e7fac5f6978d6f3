//! What a pull-request comment carries (issue 22 item 4), through the binary
//! against the sandbox: an enabled scorer is shown as the manifest wrote it,
//! without the fields the catalog fills in; a note nobody can act on (the
//! `favorite: user` export writes, the service's deprecated listing) is in
//! `-o json` only, not in text or markdown; notes follow the changes.

use crate::e2e_support;

use e2e_support::TestContext;

const ENABLE: &str = "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    metric_settings:\n      scorers:\n        - name: correctness\n        - name: context_adherence\n        - name: input_toxicity\n          num_judges: 3\n";

#[test]
fn an_enabled_scorer_is_shown_as_written() {
    let ctx = TestContext::new();
    ctx.write("repo/demo.yaml", ENABLE);
    let filled = [
        "output_type",
        "input_type",
        "model_type",
        "roll_up_method",
        "scorer_type",
    ];
    let text = ctx.evalctl(&["plan", "repo"]);
    text.expect(0);
    assert!(
        text.stdout
            .contains("      + scorers[input_toxicity]:\n          num_judges: 3\n")
            || text
                .stdout
                .contains("      + scorers[input_toxicity]: {\"num_judges\": 3}\n"),
        "{}",
        text.stdout
    );
    let markdown = ctx.evalctl(&["plan", "repo", "-o", "markdown"]);
    markdown.expect(0);
    let json = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    json.expect(0);
    // In JSON, the fields (the request body in `operations` sends them).
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let fields = doc["changes"][0]["fields"].to_string();
    assert!(fields.contains("scorers[input_toxicity]"), "{fields}");
    for (format, out) in [
        ("text", &text.stdout),
        ("markdown", &markdown.stdout),
        ("json", &fields),
    ] {
        for field in filled {
            assert!(!out.contains(field), "{format}: {field}\n{out}");
        }
    }
    // Nothing but the key: the entry alone.
    ctx.write(
        "bare/demo.yaml",
        &ENABLE.replace("          num_judges: 3\n", ""),
    );
    let bare = ctx.evalctl(&["plan", "bare"]);
    assert!(
        bare.stdout.contains("      + scorers[input_toxicity]\n"),
        "{}",
        bare.stdout
    );
    let markdown = ctx.evalctl(&["plan", "bare", "-o", "markdown"]);
    assert!(
        markdown.stdout.contains("\n+ scorers[input_toxicity]\n"),
        "{}",
        markdown.stdout
    );
    // Still sent, compared and confirmed: the apply converges.
    let apply = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
    apply.expect(0);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn notes_nobody_can_act_on_are_left_out_of_comments() {
    let ctx = TestContext::new();
    ctx.write(
        "setup/demo.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends: {favorite: user}\n",
    );
    ctx.evalctl(&["apply", "setup", "--auto-approve"]).expect(0);
    ctx.evalctl(&["export", "--dir", "repo"]).expect(0);
    let exported = std::fs::read_to_string(ctx.path("repo/demo-project.yaml")).unwrap();
    assert!(exported.contains("favorite: user"), "{exported}");
    for format in ["text", "markdown"] {
        let run = ctx.evalctl(&["plan", "repo", "-o", format]);
        run.expect(0);
        assert!(
            !run.stdout.contains("cannot be checked"),
            "{format}:\n{}",
            run.stdout
        );
        assert!(
            !run.stdout.contains("deprecated listing"),
            "{format}:\n{}",
            run.stdout
        );
        assert!(!run.stdout.contains("Notes"), "{format}:\n{}", run.stdout);
        let drift = ctx.evalctl(&["drift", "repo", "-o", format]);
        drift.expect(0);
        assert!(
            !drift.stdout.contains("cannot be checked"),
            "{format}:\n{}",
            drift.stdout
        );
    }
    let json = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let details: Vec<&str> = doc["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter(|n| n["kind"] == "detail")
        .filter_map(|n| n["message"].as_str())
        .collect();
    assert!(
        details
            .iter()
            .any(|m| m.contains("(`favorite: user`) cannot be checked")),
        "{details:#?}"
    );
    assert!(
        details.iter().any(|m| m.contains("deprecated listing")),
        "{details:#?}"
    );
    // `favorite: project` is the manifest's own claim: still said.
    let project = exported.replacen("favorite: user", "favorite: project", 1);
    std::fs::write(ctx.path("repo/demo-project.yaml"), project).unwrap();
    let run = ctx.evalctl(&["plan", "repo"]);
    assert!(run.stdout.contains("Not verifiable:"), "{}", run.stdout);
}

//! The one read path, end to end: confirmation is a re-plan of the fields
//! the manifests manage (two configs managing disjoint fields of one object
//! both converge when applied at once), and `--target` is a parsed address
//! that must select something declared and reads only what it selects.

use crate::e2e_support;

use e2e_support::{Run, TestContext};
use evalctl::sandbox::Faults;
use evalctl::sandbox::fixture::ids;

/// One log stream's metric settings, managing only `field` (its YAML).
fn one_field(field: &str) -> String {
    format!(
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    metric_settings:\n{field}"
    )
}

fn wait(child: std::process::Child) -> Run {
    let output = child.wait_with_output().expect("evalctl runs");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn two_configs_managing_disjoint_fields_of_one_object_converge_when_applied_at_once() {
    let ctx = TestContext::new();
    // Latency makes the two applies overlap: each reads, writes and reads
    // again while the other is in flight.
    ctx.faults(Faults {
        latency: std::time::Duration::from_millis(40),
        ..Faults::default()
    });
    let rounds = [
        ("correctness", 0.5),
        ("completeness", 0.25),
        ("context_adherence", 1.0),
    ];
    for (scorer, rate) in rounds {
        ctx.write(
            "scorers/project.yaml",
            &one_field(&format!("      scorers:\n        - name: {scorer}\n")),
        );
        ctx.write(
            "filters/project.yaml",
            &one_field(&format!(
                "      segment_filters:\n        - sample_rate: {rate}\n"
            )),
        );
        let spawn = |repo: &str| {
            ctx.evalctl_command(&[], &["apply", repo, "--auto-approve"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("evalctl starts")
        };
        let (a, b) = (spawn("scorers"), spawn("filters"));
        let (a, b) = (wait(a), wait(b));
        a.expect(0);
        b.expect(0);
        for repo in ["scorers", "filters"] {
            ctx.evalctl(&["plan", repo, "--detailed-exitcode"])
                .expect(0);
        }
    }
}

#[test]
fn a_target_that_selects_nothing_declared_exits_64_with_the_nearest_addresses() {
    let ctx = TestContext::new();
    ctx.copy_dir("examples/quickstart", "repo");
    let typo = ctx.evalctl(&[
        "plan",
        "repo",
        "--detailed-exitcode",
        "--target",
        "project[demo-projetc]",
    ]);
    typo.expect(64);
    assert!(
        typo.stderr.contains(
            "--target `project[demo-projetc]` selects nothing the manifests declare; did you mean `project[demo-project]`"
        ),
        "{}",
        typo.stderr
    );
    let deep = ctx.evalctl(&[
        "plan",
        "repo",
        "--target",
        "project[demo-project].log_stream[prodution].metric_settings",
    ]);
    deep.expect(64);
    assert!(
        deep.stderr.contains(
            "did you mean `project[demo-project].log_stream[production].metric_settings`"
        ),
        "{}",
        deep.stderr
    );
    let garbage = ctx.evalctl(&["plan", "repo", "--detailed-exitcode", "--target", "]]]"]);
    garbage.expect(64);
    assert!(
        garbage.stderr.contains("invalid --target `]]]`") && garbage.stderr.contains("at column 1"),
        "{}",
        garbage.stderr
    );
    let unclosed = ctx.evalctl(&["drift", "repo", "--target", "project[demo-project"]);
    unclosed.expect(64);
    assert!(
        unclosed
            .stderr
            .contains("expected `]` to close the name at column 21"),
        "{}",
        unclosed.stderr
    );
}

#[test]
fn a_target_of_one_log_stream_reads_only_that_log_stream() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\n\
         log_streams:\n\
         \x20 - name: production\n    metric_settings: {scorers: [{name: correctness}]}\n    trends: {favorite: user}\n\
         \x20 - name: staging\n    metric_settings: {scorers: [{name: completeness}]}\n    trends: {favorite: user}\n\
         experiments:\n  - name: baseline-eval\n    metric_settings: {scorers: []}\n\
         annotation_templates: []\n",
    );
    let before = ctx.sandbox.requests().len();
    ctx.evalctl(&[
        "plan",
        "repo",
        "--target",
        "project[demo-project].log_stream[production]",
    ])
    .expect(0);
    let requests: Vec<String> = ctx.sandbox.requests()[before..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let production = ids::log_stream("demo-project", "production");
    let staging = ids::log_stream("demo-project", "staging");
    let experiment = ids::experiment("demo-project", "baseline-eval");
    let project = ids::project("demo-project");
    let all = requests.join("\n");
    assert!(
        all.contains(&format!(
            "{project}/log_streams/{production}/metric_settings"
        )),
        "{all}"
    );
    assert!(
        all.contains(&format!("{project}/log_streams/{production}/trends")),
        "{all}"
    );
    for other in [&staging, &experiment] {
        assert!(!all.contains(other.as_str()), "read {other}:\n{all}");
    }
    for unwanted in ["experiments/search", "templates"] {
        assert!(!all.contains(unwanted), "read {unwanted}:\n{all}");
    }
    // The project listing, one log stream search, the scorer catalog (its
    // metric settings depend on it), the settings and the dashboard.
    assert!(requests.len() <= 6, "{all}");
}

/// With `--prune`, a target may name what `plan --prune` prints for a delete (an object
/// the manifests do not declare, in a scope they do): that one object is deleted and
/// nothing else. A name the plan does not delete is still an error (exit 64).
#[test]
fn with_prune_a_target_names_one_object_to_delete() {
    let ctx = TestContext::new();
    ctx.copy_dir("examples/quickstart", "repo");
    let all = ctx.evalctl(&["plan", "repo", "--prune"]);
    all.expect(0);
    let doomed = "project[demo-project].annotation_template[choice-annotation]";
    assert!(
        all.stdout.contains(&format!("- {doomed}")),
        "{}",
        all.stdout
    );
    let one = ctx.evalctl(&[
        "apply",
        "repo",
        "--prune",
        "--auto-approve",
        "--target",
        doomed,
    ]);
    one.expect(0);
    assert!(
        one.stdout
            .contains("0 to create, 0 to update, 0 to replace, 1 to delete"),
        "{}",
        one.stdout
    );
    // The one object is gone; the other deletes are still pending.
    let after = ctx.evalctl(&["plan", "repo", "--prune"]);
    assert!(
        !after.stdout.contains(&format!("- {doomed}")),
        "{}",
        after.stdout
    );
    assert!(
        after
            .stdout
            .contains("- project[demo-project].annotation_template[star-annotation]"),
        "{}",
        after.stdout
    );
    let typo = ctx.evalctl(&[
        "plan",
        "repo",
        "--prune",
        "--target",
        "project[demo-project].annotation_template[choice-annotatio]",
    ]);
    typo.expect(64);
    assert!(
        typo.stderr
            .contains("selects nothing the manifests declare, nor anything `--prune` deletes"),
        "{}",
        typo.stderr
    );
    // Without --prune, the same address names nothing declared.
    ctx.evalctl(&["plan", "repo", "--target", doomed])
        .expect(64);
}

/// A saved plan keeps user ids; applied, it names the people as the plan did.
#[test]
fn a_saved_plan_applied_names_the_people_the_plan_named() {
    let ctx = TestContext::new();
    ctx.copy_dir("examples/quickstart", "repo");
    let planned = ctx.evalctl(&["plan", "repo", "--prune", "--out", "saved.plan"]);
    planned.expect(0);
    let named = "created by Demo Admin <demo@example.com>";
    assert!(planned.stdout.contains(named), "{}", planned.stdout);
    let saved = ctx.path("saved.plan");
    let applied = ctx.evalctl(&[
        "apply",
        "--plan",
        &saved.display().to_string(),
        "--auto-approve",
    ]);
    applied.expect(0);
    assert!(applied.stdout.contains(named), "{}", applied.stdout);
}

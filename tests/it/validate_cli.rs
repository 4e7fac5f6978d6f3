//! `evalctl validate` as users run it: the real binary, its streams and exit statuses,
//! text and JSON output. Offline: no sandbox, no service.

use std::process::Command;

const MANY_ERRORS: &str = "tests/manifest_fixtures/many-errors.yaml";

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

/// Runs `evalctl` in the package root, with a clean colour environment and only the
/// variables given.
fn evalctl(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_evalctl"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1");
    for name in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TEAM_NAME"] {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("evalctl runs");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

const KEYS: [(&str, &str); 2] = [
    ("OPENAI_API_KEY", "sk-test"),
    ("ANTHROPIC_API_KEY", "sk-ant-test"),
];

#[test]
fn valid_manifests_exit_zero_with_a_summary_on_stdout() {
    let run = evalctl(&["validate", "examples/full"], &KEYS);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "5 files, 7 documents: valid\n");
    assert_eq!(run.stderr, "");
    let run = evalctl(&["validate", "examples/quickstart/demo-project.yaml"], &[]);
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, "1 file, 1 document: valid\n")
    );
}

#[test]
fn warnings_keep_manifests_valid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("integrations.yaml");
    std::fs::write(
        &path,
        "kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\norganization_id: ${TEAM_NAME}\n",
    )
    .expect("write");
    let run = evalctl(&["validate", path.to_str().expect("UTF-8")], &KEYS);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "1 file, 1 document: valid (1 warning)\n");
    assert!(
        run.stderr
            .starts_with("warning: environment variable `TEAM_NAME` is not set"),
        "{}",
        run.stderr
    );
}

/// Only `apply` needs integration tokens: unset, they are one note on
/// stderr, not a warning per integration (nor a GitHub annotation on every
/// pull request the plan recipe checks).
#[test]
fn unset_tokens_are_one_note_not_warnings() {
    let note = "note: plan and drift do not need integration tokens; apply does (2 not set here: ANTHROPIC_API_KEY, OPENAI_API_KEY)\n";
    let run = evalctl(&["validate", "examples/full"], &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "5 files, 7 documents: valid\n");
    assert_eq!(run.stderr, note);
    let run = evalctl(&["validate", "-o", "github", "examples/full"], &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "5 files, 7 documents: valid\n");
    assert_eq!(run.stderr, note);
    // JSON keeps each, as data.
    let run = evalctl(&["validate", "-o", "json", "examples/full"], &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("environment variable `OPENAI_API_KEY` is not set"),
        "{}",
        run.stdout
    );
}

#[test]
fn invalid_manifests_exit_65_with_every_diagnostic_on_stderr() {
    let run = evalctl(&["validate", MANY_ERRORS], &[]);
    assert_eq!(run.status, 65);
    assert_eq!(run.stdout, "9 errors in 1 file\n");
    let rendered =
        evalctl::manifest::load(&[MANY_ERRORS.into()], &|_| None).render_diagnostics(false);
    assert_eq!(
        format!("{}\n", run.stderr.trim_end()),
        format!("{}\n", rendered.trim_end())
    );
    assert!(!run.stderr.contains("DO-NOT-LEAK") && !run.stdout.contains("DO-NOT-LEAK"));
}

#[test]
fn json_output_has_the_documented_shape() {
    let run = evalctl(&["validate", "-o", "json", MANY_ERRORS], &[]);
    assert_eq!(run.status, 65);
    assert_eq!(run.stderr, "");
    assert!(!run.stdout.contains("DO-NOT-LEAK"));
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    insta::assert_json_snapshot!("validate_json_many_errors", report);

    let run = evalctl(
        &["validate", "--output", "json", "examples/quickstart"],
        &[],
    );
    assert_eq!(run.status, 0);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(
        report,
        serde_json::json!({"valid": true, "files": 1, "documents": 1, "diagnostics": []})
    );
}

#[test]
fn unreadable_paths_are_manifest_problems() {
    let run = evalctl(&["validate", "no/such/dir"], &[]);
    assert_eq!(run.status, 65, "{}", run.stderr);
    assert!(
        run.stderr.contains("path `no/such/dir` does not exist"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "1 error in 0 files\n");
}

/// `-o github`: one workflow command per diagnostic and the summary on stdout, so CI shows
/// each error on its line of the pull request; the readable diagnostics stay on stderr.
#[test]
fn github_output_annotates_each_problem() {
    let run = evalctl(&["validate", "-o", "github", MANY_ERRORS], &[]);
    assert_eq!(run.status, 65, "{}", run.stderr);
    insta::assert_snapshot!("github_annotations", run.stdout);
    assert!(
        run.stderr.contains("error: unknown field `scorrers`"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("sk-"),
        "no literal secret: {}",
        run.stdout
    );

    let run = evalctl(&["validate", "-o", "github", "examples/full"], &KEYS);
    assert_eq!(run.stdout, "5 files, 7 documents: valid\n");
}

#[test]
fn markdown_is_not_a_validate_format() {
    let run = evalctl(&["validate", "-o", "markdown", "examples/quickstart"], &[]);
    assert_eq!(run.status, 64, "{}", run.stderr);
}

#[test]
fn colour_is_used_only_when_asked() {
    let run = evalctl(&["--color", "always", "validate", MANY_ERRORS], &[]);
    assert!(run.stderr.contains("\x1b["), "{}", run.stderr);
    assert!(!run.stderr.contains("DO-NOT-LEAK"));
    let plain = evalctl(&["validate", MANY_ERRORS], &[]);
    assert!(!plain.stderr.contains('\x1b'));
}

#[test]
fn directories_are_searched_recursively_and_checked_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nested = dir.path().join("team-a");
    std::fs::create_dir_all(nested.join(".hidden")).expect("mkdir");
    std::fs::write(nested.join("a.yaml"), "kind: Project\nname: demo-project\n").expect("write");
    std::fs::write(
        dir.path().join("b.yml"),
        "kind: Project\nname: demo-project\n",
    )
    .expect("write");
    std::fs::write(nested.join(".hidden/c.yaml"), "not: [a manifest").expect("write");
    std::fs::write(nested.join("notes.txt"), "ignored").expect("write");
    let root = dir.path().to_str().expect("utf-8 path");
    let run = evalctl(&["validate", root], &[]);
    assert_eq!(run.status, 65, "{}", run.stderr);
    assert_eq!(run.stdout, "1 error in 2 files\n");
    assert!(
        run.stderr
            .contains("project `demo-project` is declared twice"),
        "{}",
        run.stderr
    );
}

/// A file found but not read (not UTF-8) is counted among the files it is in.
#[test]
fn a_file_that_cannot_be_read_counts_among_the_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("bad.yaml"), b"kind: Project\nname: \xff\n").expect("write");
    let path = dir.path().display().to_string();
    let run = evalctl(&["validate", &path], &[]);
    assert_eq!(run.status, 65, "{}", run.stderr);
    assert!(run.stderr.contains("not valid UTF-8"), "{}", run.stderr);
    assert_eq!(run.stdout, "1 error in 1 file\n");
}

/// Flags, environment, and whether stderr is coloured.
type ColourCase = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    bool,
);

/// Colour on a pipe: never unless forced; `NO_COLOR` wins over `CLICOLOR_FORCE`,
/// and `--color always` over both (the decision is anstream's, as clap's is).
#[test]
fn colour_on_a_pipe_follows_the_environment_and_the_flag() {
    let colored = |run: &Run| run.stderr.contains("\u{1b}[");
    let cases: [ColourCase; 5] = [
        (&[], &[("NO_COLOR", "")], false),
        (&[], &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")], true),
        (&[], &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")], false),
        (&["--color", "always"], &[("NO_COLOR", "1")], true),
        (
            &["--color", "never"],
            &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
            false,
        ),
    ];
    for (flags, env, expected) in cases {
        let mut args = vec!["validate", MANY_ERRORS];
        args.extend_from_slice(flags);
        let run = evalctl(&args, env);
        assert_eq!(run.status, 65, "{}", run.stderr);
        assert_eq!(colored(&run), expected, "{flags:?} {env:?}: {}", run.stderr);
    }
}

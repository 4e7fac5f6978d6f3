//! Hints for the first day (issue 22 item 8), through the binary: a repo
//! whose YAML holds no manifest says so once (and that paths are arguments),
//! not "missing `kind`" per file; a base URL without a scheme suggests one; a
//! misspelt required field is one error at the misspelling; an apply that
//! sends no integration token says nothing about unset tokens; the
//! quickstart's sandbox state file is ignored by git.

use std::path::Path;
use std::process::Command;

/// Runs `evalctl ARGS` in `dir` with `env`: (status, stdout, stderr).
fn evalctl(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_evalctl"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("EVALCTL_LOG")
        .env_remove("EVALCTL_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env("EVALCTL_API_KEY", "demo-api-key");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("evalctl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_repo_without_manifests_says_so_once_and_that_paths_are_arguments() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("docker-compose.yml"),
        "services:\n  web:\n    image: nginx\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("mkdocs.yml"), "site_name: Docs\n").expect("write");
    std::fs::create_dir(dir.path().join("ci")).expect("mkdir");
    std::fs::write(
        dir.path().join("ci/plan.yml"),
        "on: pull_request\njobs: {}\n---\n- a list\n",
    )
    .expect("write");
    for command in ["validate", "plan", "drift"] {
        let (status, _, stderr) = evalctl(
            dir.path(),
            &[("EVALCTL_BASE_URL", "http://127.0.0.1:9")],
            &[command],
        );
        assert_eq!(status, 65, "{command}:\n{stderr}");
        assert!(
            stderr.contains(
                "no manifest found: the YAML file(s) here (`./ci/plan.yml`, `./docker-compose.yml`, `./mkdocs.yml`) have no document with a `kind`"
            ),
            "{command}:\n{stderr}"
        );
        assert!(
            stderr.contains("name their files or directories as arguments (the default is `.`)"),
            "{command}:\n{stderr}"
        );
        assert!(!stderr.contains("missing `kind`"), "{command}:\n{stderr}");
        assert!(
            !stderr.contains("a manifest document is a mapping"),
            "{command}:\n{stderr}"
        );
    }
    // Beside a manifest, a document without a kind is still an error of its own.
    std::fs::write(
        dir.path().join("project.yaml"),
        "kind: Project\nname: demo-project\n",
    )
    .expect("write");
    let (status, _, stderr) = evalctl(dir.path(), &[], &["validate"]);
    assert_eq!(status, 65, "{stderr}");
    assert!(stderr.contains("missing `kind`"), "{stderr}");
    assert!(!stderr.contains("no manifest found"), "{stderr}");
}

#[test]
fn a_base_url_without_a_scheme_suggests_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (url, suggested) in [
        ("api.example.com", "https://api.example.com"),
        ("localhost:8080", "http://localhost:8080"),
    ] {
        let (status, _, stderr) = evalctl(dir.path(), &[("EVALCTL_BASE_URL", url)], &["whoami"]);
        assert_eq!(status, 1, "{stderr}");
        assert!(
            stderr.contains(&format!("no scheme: did you mean `{suggested}`?")),
            "{url}:\n{stderr}"
        );
        assert!(!stderr.contains("relative URL"), "{stderr}");
    }
}

#[test]
fn a_misspelt_required_field_is_one_error_at_the_misspelling() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("p.yaml"),
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    metric_settings:\n      scorers:\n        - name: correctness\n      segment_filters:\n        - sampel_rate: 0.5\n",
    )
    .expect("write");
    let (status, stdout, stderr) = evalctl(dir.path(), &[], &["validate", "p.yaml"]);
    assert_eq!(status, 65, "{stderr}");
    assert!(
        stderr.contains(
            "error: unknown field `sampel_rate`\n --> p.yaml:9:11\n  |\n9 |         - sampel_rate: 0.5\n  |           ^^^^^^^^^^^\n  |\n  = help: did you mean `sample_rate`? It is required, and missing here"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("missing the required field"), "{stderr}");
    assert!(stdout.contains("1 error in 1 file"), "{stdout}");
    // A required field missing without a misspelling is still said.
    std::fs::write(
        dir.path().join("p.yaml"),
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    metric_settings:\n      scorers:\n        - name: correctness\n      segment_filters:\n        - llm_scorers: true\n",
    )
    .expect("write");
    let (status, _, stderr) = evalctl(dir.path(), &[], &["validate", "p.yaml"]);
    assert_eq!(status, 65, "{stderr}");
    assert!(
        stderr.contains("is missing the required field `sample_rate`"),
        "{stderr}"
    );
}

#[test]
fn an_apply_that_sends_no_token_says_nothing_about_unset_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let integration = "kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\n";
    std::fs::write(dir.path().join("openai.yaml"), integration).expect("write");
    std::fs::write(
        dir.path().join("demo.yaml"),
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections:\n        - {name: Quality, description: first}\n",
    )
    .expect("write");
    let state = ["--sandbox-state", "state.db"];
    let args = |extra: &[&'static str]| {
        let mut args = vec!["apply", ".", "--auto-approve"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&state);
        args
    };
    // The first apply creates the integration: it needs the token.
    let (status, _, stderr) = evalctl(dir.path(), &[], &args(&[]));
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains(
            "warning: environment variable `OPENAI_API_KEY` is not set; `apply` will need it\n --> ./openai.yaml:3:8"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was applied: these environment variables hold integration secrets and are not set, or empty: OPENAI_API_KEY"), "{stderr}");
    let (status, _, stderr) = evalctl(
        dir.path(),
        &[("OPENAI_API_KEY", "sk-day-one-0123456789")],
        &args(&[]),
    );
    assert_eq!(status, 0, "{stderr}");
    // A change elsewhere: the integration is not sent, its token not needed.
    std::fs::write(
        dir.path().join("demo.yaml"),
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections:\n        - {name: Quality, description: second}\n",
    )
    .expect("write");
    let (status, stdout, stderr) = evalctl(dir.path(), &[], &args(&[]));
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("Quality"), "{stdout}");
    assert!(!stderr.contains("OPENAI_API_KEY"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn the_quickstarts_sandbox_state_file_is_ignored_by_git() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let ignore = std::fs::read_to_string(root.join(".gitignore")).expect(".gitignore");
    let ignored: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let states: Vec<&str> = readme
        .split("evalctl sandbox --state ")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert!(
        !states.is_empty(),
        "the README's quickstart runs a sandbox with --state"
    );
    for state in states {
        assert!(
            ignored.contains(&state) || ignored.contains(&format!("/{state}").as_str()),
            "{state} is not in .gitignore: {ignored:?}"
        );
    }
}

/// GitHub's anchor of a markdown heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_commands_help_links_a_page_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, top, _) = evalctl(dir.path(), &[], &["--help"]);
    let top = top.split_whitespace().collect::<Vec<_>>().join(" ");
    for status in [
        "0 success",
        "1 error",
        "2 changes",
        "3 apply",
        "4 a three-way",
        "64 usage",
        "65 invalid",
        "130 interrupted",
    ] {
        assert!(top.contains(status), "{status}:\n{top}");
    }
    for command in [
        "validate",
        "schema",
        "plan",
        "apply",
        "drift",
        "export",
        "sandbox",
        "whoami",
        "scorers",
        "completions",
        "man",
    ] {
        let (status, help, _) = evalctl(dir.path(), &[], &[command, "--help"]);
        assert_eq!(status, 0, "{command}");
        let link = help
            .split("Documentation: ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{command} --help links no page:\n{help}"));
        let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
        let text = std::fs::read_to_string(root.join(file))
            .unwrap_or_else(|e| panic!("{command}: {file}: {e}"));
        if !anchor.is_empty() {
            let anchors: Vec<String> = text
                .lines()
                .filter_map(|l| l.strip_prefix('#'))
                .map(|h| slug(h.trim_start_matches('#')))
                .collect();
            assert!(
                anchors.iter().any(|a| a == anchor),
                "{command}: {link}: {anchors:?}"
            );
        }
    }
}

//! Exit statuses of manifest problems (issue 11 item 8), every command on every case, as
//! the README's exit-status table lists them: a path that does not exist, a directory
//! without manifests, a file that cannot be read and a manifest error make every command
//! that loads manifests exit 65, naming the path, before it contacts the service; a
//! project, log stream, scorer or version the service does not have makes plan, apply
//! and drift exit 65 at the field that names it (`file:line:column`, "did you mean"),
//! also as GitHub annotations with `--github-annotations`; validate, offline, cannot see
//! those (0); export of a project that does not exist is a usage error (64).

use std::path::Path;
use std::process::Command;

/// The commands that load manifests, with what each needs besides the path.
const COMMANDS: [&[&str]; 4] = [
    &["validate"],
    &["plan"],
    &["apply", "--auto-approve"],
    &["drift"],
];

/// Runs `evalctl <command> <path>` in `dir`, pointed at a service that is not there: a
/// command that tried to reach it would exit 1, not 65.
fn evalctl(dir: &Path, command: &[&str], path: &str) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(command)
        .arg(path)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env("EVALCTL_BASE_URL", "http://127.0.0.1:9")
        .env("EVALCTL_API_KEY", "not-used")
        .output()
        .expect("evalctl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn unreachable_manifests_exit_65_with_their_path_for_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("empty")).expect("mkdir");
    std::fs::create_dir(dir.path().join("broken")).expect("mkdir");
    // A manifest that cannot be read: a link to nothing.
    std::os::unix::fs::symlink("nowhere.yaml", dir.path().join("broken/project.yaml"))
        .expect("symlink");
    std::fs::create_dir(dir.path().join("invalid")).expect("mkdir");
    std::fs::write(
        dir.path().join("invalid/project.yaml"),
        "kind: Project\nname: demo-project\nlog_stream: []\n",
    )
    .expect("write");
    let cases = [
        ("no/such/dir", "path `no/such/dir` does not exist"),
        (
            "empty",
            "no manifests (`*.yaml` or `*.yml` files) in directory `empty`",
        ),
        ("broken", "cannot read `broken/project.yaml`"),
        ("invalid", " --> invalid/project.yaml:3:1"),
    ];
    for command in COMMANDS {
        for (path, message) in cases {
            let (status, stderr) = evalctl(dir.path(), command, path);
            let what = format!("evalctl {} {path}", command.join(" "));
            assert_eq!(status, 65, "{what}:\n{stderr}");
            assert!(stderr.contains(message), "{what}:\n{stderr}");
        }
    }
}

/// Runs `evalctl <args>` in `dir` against the built-in sandbox (its demo fixture has
/// project `demo-project`, log stream `production` and the scorer catalog).
fn sandboxed(dir: &Path, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(args)
        .arg("--sandbox")
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("EVALCTL_BASE_URL")
        .env_remove("EVALCTL_API_KEY")
        .output()
        .expect("evalctl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Manifests naming what the service does not have, one case a directory: what each
/// command must print (the field's `file:line:column`, the line quoted with the field
/// marked, the nearest names).
const PLAN_TIME_CASES: [(&str, &str, [&str; 3]); 4] = [
    (
        "unknown-project",
        // By id: a project declared by a name that does not exist is created.
        "kind: Project\nid: 00000000-0000-4000-8000-000000000000\n",
        [
            "error: project `id:00000000-0000-4000-8000-000000000000` not found\n --> unknown-project/p.yaml:2:5\n",
            "2 | id: 00000000-0000-4000-8000-000000000000\n  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
            "",
        ],
    ),
    (
        "unknown-log-stream",
        // By id, likewise.
        "kind: Project\nname: demo-project\nlog_streams:\n  - id: 00000000-0000-4000-8000-000000000000\n    trends: {favorite: user}\n",
        [
            "error: log stream `id:00000000-0000-4000-8000-000000000000` not found in project `demo-project`\n --> unknown-log-stream/p.yaml:4:9\n",
            "4 |   - id: 00000000-0000-4000-8000-000000000000\n  |         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
            "",
        ],
    ),
    (
        "unknown-scorer",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    metric_settings:\n      scorers:\n        - name: correctness\n        - name: corectness\n",
        [
            "error: log_stream `production`: no scorer named `corectness` in the catalog\n --> unknown-scorer/p.yaml:8:17\n",
            "8 |         - name: corectness\n  |                 ^^^^^^^^^^\n",
            "= help: did you mean `correctness`",
        ],
    ),
    (
        "unknown-version",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    metric_settings:\n      scorers:\n        - name: completeness\n          scorer_version: 99\n",
        [
            "error: log_stream `production`: scorer `completeness` has no version 99 (it has 1, 2, 3)\n --> unknown-version/p.yaml:8:27\n",
            "8 |           scorer_version: 99\n  |                           ^^\n",
            "",
        ],
    ),
];

#[test]
fn references_unknown_at_plan_time_exit_65_at_the_field_for_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (case, manifest, _) in PLAN_TIME_CASES {
        std::fs::create_dir(dir.path().join(case)).expect("mkdir");
        std::fs::write(dir.path().join(case).join("p.yaml"), manifest).expect("write");
    }
    for command in [&["plan"][..], &["apply", "--auto-approve"], &["drift"]] {
        for (case, _, expected) in PLAN_TIME_CASES {
            let mut args = command.to_vec();
            args.push(case);
            let (status, stderr) = sandboxed(dir.path(), &args);
            let what = format!("evalctl {}", args.join(" "));
            assert_eq!(status, 65, "{what}:\n{stderr}");
            for part in expected {
                assert!(stderr.contains(part), "{what}: {part:?} in\n{stderr}");
            }
            assert!(
                stderr.contains(
                    "the manifests refer to 1 object(s) that do not exist in the service"
                ),
                "{what}:\n{stderr}"
            );
            // Nothing is printed as GitHub annotations unless asked.
            assert!(!stderr.contains("::error"), "{what}:\n{stderr}");
        }
    }
    // validate is offline: it cannot know what the service has.
    for (case, _, _) in PLAN_TIME_CASES {
        let (status, stderr) = evalctl(dir.path(), &["validate"], case);
        assert_eq!(status, 0, "validate {case}:\n{stderr}");
    }
}

#[test]
fn plan_prints_github_annotations_for_manifest_problems_when_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("config")).expect("mkdir");
    let manifest = "kind: Project\nid: 00000000-0000-4000-8000-000000000000\n---\nkind: Project\nname: demo-project\n\
        log_streams:\n  - id: 00000000-0000-4000-8000-000000000000\n    trends: {favorite: user}\n  - name: production\n\
        \x20   metric_settings:\n      scorers:\n        - name: correctness\n\
        \x20       - name: corectness\n        - name: completeness\n          scorer_version: 99\n";
    std::fs::write(dir.path().join("config/projects.yaml"), manifest).expect("write");
    let (status, stderr) = sandboxed(dir.path(), &["plan", "config", "--github-annotations"]);
    assert_eq!(status, 65, "{stderr}");
    let annotations: Vec<&str> = stderr.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(
        annotations,
        [
            "::error file=config/projects.yaml,line=2,col=5::project `id:00000000-0000-4000-8000-000000000000` not found",
            "::error file=config/projects.yaml,line=7,col=9::log stream `id:00000000-0000-4000-8000-000000000000` not found in project `demo-project`",
            "::error file=config/projects.yaml,line=13,col=17::log_stream `production`: no scorer named `corectness` in the catalog%0Ahelp: did you mean `correctness`, `sql_correctness`, `completeness`?",
            "::error file=config/projects.yaml,line=15,col=27::log_stream `production`: scorer `completeness` has no version 99 (it has 1, 2, 3)",
        ],
        "{stderr}"
    );
    // Problems found loading are annotated the same way, before anything is read.
    std::fs::write(
        dir.path().join("config/projects.yaml"),
        "kind: Project\nname: demo-project\nlog_stream: []\n",
    )
    .expect("write");
    let (status, stderr) = sandboxed(dir.path(), &["plan", "config", "--github-annotations"]);
    assert_eq!(status, 65, "{stderr}");
    assert!(
        stderr.contains("::error file=config/projects.yaml,line=3,col=1::"),
        "{stderr}"
    );
}

#[test]
fn export_of_a_project_that_does_not_exist_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (status, stderr) = sandboxed(
        dir.path(),
        &["export", "--project", "demo-projet", "--dir", "out"],
    );
    assert_eq!(status, 64, "{stderr}");
    assert!(
        stderr.contains("project `demo-projet` not found; did you mean `demo-project`?"),
        "{stderr}"
    );
}

//! Manifests that cannot be reached are manifest problems (issue 11 item 8): a path that
//! does not exist, a directory without manifests and a file that cannot be read make every
//! command that loads manifests exit 65, naming the path, before it contacts the service.

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
    let cases = [
        ("no/such/dir", "path `no/such/dir` does not exist"),
        (
            "empty",
            "no manifests (`*.yaml` or `*.yml` files) in directory `empty`",
        ),
        ("broken", "cannot read `broken/project.yaml`"),
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

//! The command line documents itself: every command's `--help` shows an
//! example, and completions and the man page are generated from the same
//! definition.

use std::process::Command;

use clap::CommandFactory;
use evalctl::cli::Cli;

fn evalctl(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(args)
        .output()
        .expect("run evalctl");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// Every command and subcommand below `command`, parents included, without
/// clap's generated `help` commands.
fn all_commands(command: &clap::Command, prefix: &str, out: &mut Vec<(String, clap::Command)>) {
    for sub in command.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let path = format!("{prefix} {}", sub.get_name()).trim().to_owned();
        out.push((path.clone(), sub.clone()));
        all_commands(sub, &path, out);
    }
}

#[test]
fn every_command_s_help_has_an_example() {
    let mut commands = Vec::new();
    all_commands(&Cli::command(), "", &mut commands);
    assert!(commands.len() >= 10, "{commands:?}");
    for (path, command) in commands {
        let after = command
            .get_after_help()
            .map(|s| s.to_string())
            .unwrap_or_default();
        assert!(
            after.contains("Example"),
            "`evalctl {path} --help` shows no example"
        );
        let mut args: Vec<&str> = path.split(' ').collect();
        args.push("--help");
        let (status, help) = evalctl(&args);
        assert_eq!(status, 0, "evalctl {path} --help");
        assert!(help.contains("Example"), "{help}");
    }
}

#[test]
fn completions_and_man_pages_are_generated() {
    for shell in ["bash", "zsh", "fish"] {
        let (status, script) = evalctl(&["completions", shell]);
        assert_eq!(status, 0);
        assert!(
            script.contains("evalctl") && script.contains("plan"),
            "{shell}: {script}"
        );
    }
    let (status, page) = evalctl(&["man"]);
    assert_eq!(status, 0);
    assert!(page.contains(".TH") && page.contains("evalctl"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    let (status, _) = evalctl(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    assert_eq!(status, 0);
    assert!(dir.path().join("evalctl.1").exists());
    assert!(dir.path().join("evalctl-plan.1").exists());
}

#[test]
fn help_and_version_exit_0_and_usage_errors_exit_64() {
    assert_eq!(evalctl(&["--help"]).0, 0);
    assert_eq!(evalctl(&["--version"]).0, 0);
    assert_eq!(evalctl(&["plan", "--no-such-flag"]).0, 64);
    assert_eq!(evalctl(&["no-such-command"]).0, 64);
}

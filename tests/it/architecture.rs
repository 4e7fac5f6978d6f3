//! The arrows of ARCHITECTURE.md, checked by reading the tree (so they cannot
//! go stale): which modules of `src/` may name which. Each rule is a grep a
//! reviewer could run by hand; a failure names the file and the line.
//!
//! - `manifest` does not reach up into `plan` (the fingerprint both use lives
//!   below them, in `api::fingerprint`);
//! - `export` writes what `reconcile` read: it imports neither the client nor
//!   the readers;
//! - nothing in `src/` includes a file from `tests/` (the service reference is
//!   a crate asset under `reference/`);
//! - clap lives in the command layer only (`cli/`, `commands/`, the crate
//!   root's `run_cli`): lower layers define plain types that `cli` fills.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every line of a file under `src/<dir>` that contains one of `needles`
/// outside a comment, as `file:line: text`.
fn offending_lines(dir: &str, needles: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    if root.is_file() {
        files.push(root.clone());
    } else {
        rust_files(&root, &mut files);
    }
    assert!(!files.is_empty(), "no Rust file under src/{dir}");
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if needles.iter().any(|needle| code.contains(needle)) {
                out.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    out
}

#[test]
fn the_manifest_loader_does_not_reach_up_into_the_planner() {
    let found = offending_lines("manifest", &["crate::plan", "use crate::reconcile"]);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn export_writes_what_reconcile_read_and_reads_nothing_itself() {
    let found = offending_lines(
        "export",
        &["crate::client", "crate::reconcile", "reqwest::", "Client"],
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn nothing_in_src_includes_a_file_from_tests() {
    let found = offending_lines("", &["tests/reference", "../tests/", "../../tests/"]);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn clap_lives_in_the_command_layer_only() {
    let command_layer = ["src/cli/", "src/commands/", "src/lib.rs", "src/main.rs"];
    let found: Vec<String> = offending_lines("", &["clap::", "use clap", "clap_"])
        .into_iter()
        .filter(|line| {
            let path = line.split(':').next().unwrap_or_default();
            let relative = path
                .split_once("/src/")
                .map_or(path.to_owned(), |(_, rest)| format!("src/{rest}"));
            !command_layer
                .iter()
                .any(|prefix| relative.starts_with(prefix))
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The files `scripts/kind-spread.sh -v` lists for `kind`: those of `src/`
/// outside the kind's folders that name its types or address kind.
fn spread_of(kind: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("sh")
        .arg("scripts/kind-spread.sh")
        .arg("-v")
        .current_dir(root)
        .output()
        .expect("sh runs scripts/kind-spread.sh");
    assert!(out.status.success(), "kind-spread.sh failed: {out:?}");
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{kind} ")));
    assert!(
        lines.next().is_some(),
        "kind-spread.sh knows no kind {kind}"
    );
    lines
        .take_while(|l| l.starts_with("    "))
        .map(|l| l.trim().to_owned())
        .collect()
}

/// The files docs/development.md lists for `kind` between its markers.
fn guide_lists(kind: &str) -> Vec<String> {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/development.md");
    let text = std::fs::read_to_string(guide).expect("docs/development.md");
    let start = format!("<!-- kind-files:{kind} -->");
    let body = text
        .split_once(&start)
        .and_then(|(_, rest)| rest.split_once("<!-- /kind-files -->"))
        .map(|(body, _)| body)
        .unwrap_or_else(|| panic!("docs/development.md has no {start} list"));
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("- `"))
        .map(|l| l.trim_end_matches('`').to_owned())
        .collect()
}

#[test]
fn the_guide_lists_the_files_a_kind_touches() {
    // The guide's "Adding a resource kind" names, for the kind ported first
    // and each kind built on the new shape, exactly the files outside its
    // folder that still name it.
    for kind in [
        "templates",
        "prompt_templates",
        "protect_stages",
        "scorers",
        "projects",
    ] {
        assert_eq!(
            guide_lists(kind),
            spread_of(kind),
            "docs/development.md's list for {kind} differs from `sh scripts/kind-spread.sh -v`; \
             update the list between its markers"
        );
    }
}

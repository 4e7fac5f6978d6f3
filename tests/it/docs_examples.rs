//! The manifests the documentation shows are manifests evalctl accepts: every
//! ```` ```yaml ```` block of README.md and docs/*.md that is a whole document
//! (it starts with `kind:`, after comments) is validated on its own with
//! `evalctl validate`, the files it names (`template_file:`, `code_file:`, …)
//! written beside it. A field renamed or a rule tightened without the docs
//! following fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `yaml` blocks of `text` that are whole documents, with the line each
/// starts on.
fn documents(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        match &mut block {
            None if line.trim_end() == "```yaml" => block = Some((n + 2, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => {
                let (start, body) = block.take().expect("in a block");
                let first = body
                    .lines()
                    .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
                if first.is_some_and(|l| l.starts_with("kind:")) {
                    out.push((start, body));
                }
            }
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    out
}

/// The files a document names, relative to it (`template_file: prompts/a.txt`).
fn named_files(document: &str) -> Vec<String> {
    document
        .lines()
        .filter_map(|line| {
            let line = line.trim_start().trim_start_matches("- ");
            let (key, value) = line.split_once(':')?;
            if !key.trim().ends_with("_file") {
                return None;
            }
            let value = value.split('#').next()?.trim().trim_matches('"');
            (!value.is_empty()).then(|| value.to_owned())
        })
        .collect()
}

/// What a named file holds: a code scorer the validation accepts, or a prompt.
fn stub(path: &str) -> &'static str {
    if path.ends_with(".py") {
        "def scorer_fn(*, index, node_input, node_output, **kwargs) -> bool:\n    return True\n"
    } else {
        "Rate the answer to {question}.\n"
    }
}

fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is read")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

#[test]
fn every_whole_manifest_the_documentation_shows_validates() {
    let scratch =
        std::env::temp_dir().join(format!("evalctl-docs-examples-{}", std::process::id()));
    let mut checked = 0;
    let mut failures = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("a page is read");
        for (line, document) in documents(&text) {
            let dir = scratch.join(format!("{checked}"));
            std::fs::create_dir_all(&dir).expect("a scratch directory");
            std::fs::write(dir.join("manifest.yaml"), &document).expect("written");
            for file in named_files(&document) {
                let path = dir.join(&file);
                std::fs::create_dir_all(path.parent().expect("a parent")).expect("its directory");
                std::fs::write(&path, stub(&file)).expect("written");
            }
            let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
                .arg("validate")
                .arg(&dir)
                .env("NO_COLOR", "1")
                .output()
                .expect("evalctl runs");
            if !output.status.success() {
                failures.push(format!(
                    "{}:{line}:\n{}{}",
                    page.display(),
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The README's examples of the kinds alone are more than ten.
    assert!(checked >= 10, "only {checked} documents found");
}

#[test]
fn the_block_finder_keeps_whole_documents_and_their_files() {
    let page = "text\n```yaml\n# a comment\nkind: Scorer\ncode_file: a/b.py  # here\n```\n```yaml\nscorers: []\n```\n";
    let found = documents(page);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, 3);
    assert_eq!(named_files(&found[0].1), ["a/b.py"]);
}

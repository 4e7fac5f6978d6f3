//! Orphaned snapshots are rejected: every `tests/it/snapshots/it__<file>__<name>.snap`
//! must belong to a test module `tests/it/<file>.rs` that still mentions `<name>`
//! (its test function or the snapshot's explicit name). A renamed or deleted
//! test must take its snapshot with it.

use std::path::Path;

#[test]
fn every_snapshot_belongs_to_a_live_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut orphans = Vec::new();
    for entry in std::fs::read_dir(root.join("snapshots")).expect("tests/it/snapshots exists") {
        let path = entry.expect("a directory entry").path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some(pending) = file_name.strip_suffix(".snap.new") {
            orphans.push(format!(
                "{pending}: a pending .snap.new (review it, then remove it)"
            ));
            continue;
        }
        let Some(stem) = file_name.strip_suffix(".snap") else {
            continue;
        };
        let Some((test_file, name)) = stem
            .strip_prefix("it__")
            .and_then(|rest| rest.split_once("__"))
        else {
            orphans.push(format!(
                "{file_name}: not named it__<test module>__<snapshot>.snap"
            ));
            continue;
        };
        // insta numbers repeated unnamed snapshots of one test: `name-2`.
        let name = match name.rsplit_once('-') {
            Some((base, n)) if n.chars().all(|c| c.is_ascii_digit()) => base,
            _ => name,
        };
        let source = root.join(format!("{test_file}.rs"));
        match std::fs::read_to_string(&source) {
            Ok(text) if text.contains(name) => {}
            Ok(_) => orphans.push(format!(
                "{file_name}: tests/it/{test_file}.rs no longer mentions `{name}`"
            )),
            Err(_) => orphans.push(format!(
                "{file_name}: tests/it/{test_file}.rs does not exist"
            )),
        }
    }
    assert!(
        orphans.is_empty(),
        "orphaned snapshots:\n  {}",
        orphans.join("\n  ")
    );
}

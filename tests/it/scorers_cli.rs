//! `evalctl scorers list` and `evalctl scorers usage`: the catalog by name,
//! type and version, and a scorer version named by `NAME`, `NAME@VERSION` or
//! an id, all against the sandbox's demo catalog.

use crate::e2e_support;

use e2e_support::TestContext;
use serde_json::Value;

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

/// The catalog entry of `name` in `scorers list -o json`.
fn entry<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["scorers"]
        .as_array()
        .and_then(|s| s.iter().find(|e| e["name"] == name))
        .unwrap_or_else(|| panic!("{name} is not listed"))
}

#[test]
fn the_list_shows_names_types_and_versions() {
    let ctx = TestContext::new();
    let text = ctx.evalctl(&["scorers", "list"]);
    text.expect(0);
    let lines: Vec<&str> = text.stdout.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{}", text.stdout);
    assert!(lines[0].contains("TYPE") && lines[0].contains("LATEST VERSION ID"));
    let correctness = lines
        .iter()
        .find(|l| l.starts_with("correctness "))
        .unwrap_or_else(|| panic!("{}", text.stdout));
    assert!(correctness.contains(" preset "), "{correctness}");
    assert!(text.stdout.ends_with(
        "66 scorers. `evalctl scorers usage NAME[@VERSION]` lists the projects that use one.\n"
    ));
    // Sorted by name.
    let names: Vec<&str> = lines[1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);

    let list = json(
        &ctx.evalctl(&["scorers", "list", "-o", "json", "--versions"])
            .stdout,
    );
    let correctness = entry(&list, "correctness");
    assert_eq!(correctness["scorer_type"], "preset");
    let versions = correctness["versions"].as_array().expect("versions");
    let numbers: Vec<i64> = versions
        .iter()
        .filter_map(|v| v["version"].as_i64())
        .collect();
    assert!(
        numbers.len() >= 2 && numbers.windows(2).all(|w| w[0] < w[1]),
        "{numbers:?}"
    );
    assert_eq!(
        correctness["latest_version"]["version"].as_i64(),
        numbers.last().copied()
    );
    let with_versions = ctx.evalctl(&["scorers", "list", "--versions"]);
    with_versions.expect(0);
    for v in versions {
        let id = v["id"].as_str().expect("an id");
        assert!(with_versions.stdout.contains(id), "{id}");
    }
}

#[test]
fn usage_takes_a_name_a_name_at_a_version_or_an_id() {
    let ctx = TestContext::new();
    let list = json(
        &ctx.evalctl(&["scorers", "list", "-o", "json", "--versions"])
            .stdout,
    );
    let correctness = entry(&list, "correctness");
    let latest = correctness["latest_version"]["id"]
        .as_str()
        .expect("latest")
        .to_owned();
    let scorer_id = correctness["id"].as_str().expect("id").to_owned();
    let by_number = |n: i64| {
        correctness["versions"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["version"] == n))
            .and_then(|v| v["id"].as_str())
            .expect("the version")
            .to_owned()
    };
    let usage = |scorer: &str| {
        let run = ctx.evalctl(&["scorers", "usage", scorer, "-o", "json"]);
        run.expect(0);
        json(&run.stdout)
    };
    let by_id = usage(&latest);
    let projects = by_id["projects"].clone();
    assert!(
        projects.as_array().is_some_and(|p| !p.is_empty()),
        "the demo project uses correctness: {by_id}"
    );
    for named in ["correctness", scorer_id.as_str()] {
        let doc = usage(named);
        assert_eq!(doc["scorer_version_id"], latest, "{named}");
        assert_eq!(doc["scorer"], "correctness");
        assert_eq!(doc["projects"], projects, "{named}");
    }
    let first = usage("correctness@1");
    assert_eq!(first["scorer_version_id"], by_number(1));
    assert_eq!(first["version"], 1);
    assert_eq!(usage("correctness@v1")["scorer_version_id"], by_number(1));

    let text = ctx.evalctl(&["scorers", "usage", "correctness"]);
    text.expect(0);
    assert!(
        text.stdout.contains(&format!(
            "use scorer `correctness` v{} ({latest}):",
            by_id_version(correctness)
        )),
        "{}",
        text.stdout
    );
}

fn by_id_version(entry: &Value) -> i64 {
    entry["latest_version"]["version"]
        .as_i64()
        .expect("a number")
}

#[test]
fn a_scorer_that_is_not_there_is_a_usage_error_with_the_nearest_names() {
    let ctx = TestContext::new();
    let typo = ctx.evalctl(&["scorers", "usage", "corectness"]);
    typo.expect(64);
    assert!(
        typo.stderr
            .contains("no scorer named `corectness` in the catalog; did you mean `correctness`"),
        "{}",
        typo.stderr
    );
    let version = ctx.evalctl(&["scorers", "usage", "correctness@99"]);
    version.expect(64);
    assert!(
        version
            .stderr
            .contains("scorer `correctness` has no version 99 (it has 1, 2"),
        "{}",
        version.stderr
    );
    let syntax = ctx.evalctl(&["scorers", "usage", "correctness@latest"]);
    syntax.expect(64);
    assert!(
        syntax.stderr.contains("`latest` is not a version number"),
        "{}",
        syntax.stderr
    );
}

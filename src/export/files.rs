//! Where exported files go: stable, filesystem-safe file names, the schema
//! path editors use, the refusal to overwrite, and writing each file whole
//! (a temporary file renamed into place, so a reader never sees half of one).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use super::write::SchemaLocation;
use crate::manifest::schema::SCHEMA_FILE;
use crate::state::snapshot::ProjectRef;

/// The file name of the integrations (never a project's).
pub const INTEGRATIONS_FILE: &str = "integrations.yaml";

/// The file of the custom scorers (`kind: Scorer` documents).
pub const SCORERS_FILE: &str = "scorers.yaml";
/// The file of the global prompt templates.
pub const PROMPT_TEMPLATES_FILE: &str = "prompt-templates.yaml";

/// Longest slug, in characters, before `-<n>` and `.yaml`.
const MAX_SLUG: usize = 64;

/// Writing the files failed.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    /// Files exist and `--force` was not given.
    #[error(
        "{} already exist{}: {} (pass --force to overwrite)",
        if .paths.len() == 1 { "a file" } else { "files" },
        if .paths.len() == 1 { "s" } else { "" },
        .paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    Exists {
        /// The files that exist.
        paths: Vec<PathBuf>,
    },
    /// A directory or file could not be created or written.
    #[error("cannot write {}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// The slug of a project name: lower-case ASCII letters, digits, `_` and
/// single `-` (anything else becomes `-`), at most 64 characters; `project`
/// when nothing is left; Windows device names get `-project` appended.
#[must_use]
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    // A secret evalctl holds is no part of a file name (`********` slugs to nothing).
    for c in crate::scrub::mask(name).chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c.to_ascii_lowercase());
        } else {
            dash = true;
        }
        if out.len() >= MAX_SLUG {
            break;
        }
    }
    let mut out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        out = "project".to_owned();
    }
    let device = matches!(out.as_str(), "con" | "prn" | "aux" | "nul")
        || ((out.starts_with("com") || out.starts_with("lpt"))
            && out.len() == 4
            && out[3..].chars().all(|c| c.is_ascii_digit()));
    if device {
        out.push_str("-project");
    }
    out
}

/// The file name (`<slug>.yaml`) of every project, by id. Deterministic:
/// a project whose name is its own slug keeps it first, then by name and id;
/// a later project with the same slug gets the first free `<slug>-<n>`
/// (n from 2) that is no other project's slug. `integrations` and `scorers`
/// are reserved.
#[must_use]
pub fn file_names(projects: &[ProjectRef]) -> BTreeMap<String, String> {
    let mut order: Vec<(&ProjectRef, String)> =
        projects.iter().map(|p| (p, slug(&p.name))).collect();
    order.sort_by(|(a, sa), (b, sb)| {
        (sa != &a.name, &a.name, &a.id).cmp(&(sb != &b.name, &b.name, &b.id))
    });
    let natural: BTreeSet<String> = order.iter().map(|(_, s)| s.clone()).collect();
    let reserved = INTEGRATIONS_FILE.trim_end_matches(".yaml");
    let mut used: BTreeSet<String> = BTreeSet::from([
        reserved.to_owned(),
        SCORERS_FILE.trim_end_matches(".yaml").to_owned(),
        PROMPT_TEMPLATES_FILE.trim_end_matches(".yaml").to_owned(),
    ]);
    let mut out = BTreeMap::new();
    for (project, base) in order {
        let mut candidate = base.clone();
        let mut n = 2;
        while used.contains(&candidate) || (candidate != base && natural.contains(&candidate)) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        used.insert(candidate.clone());
        out.insert(project.id.clone(), format!("{candidate}.yaml"));
    }
    out
}

/// `path` made absolute and with `.` and `..` resolved by its text alone.
fn lexical_absolute(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The schema's path relative to `dir`, when `schemas/evalctl-manifest.schema.json`
/// exists in `dir` or one of its ancestors (a config repo, or this repository).
#[must_use]
pub fn schema_location(dir: &Path) -> SchemaLocation {
    let dir = lexical_absolute(dir);
    for (depth, ancestor) in dir.ancestors().enumerate() {
        if ancestor.join("schemas").join(SCHEMA_FILE).is_file() {
            let mut relative = "../".repeat(depth);
            relative.push_str("schemas/");
            relative.push_str(SCHEMA_FILE);
            return SchemaLocation::At(relative);
        }
    }
    SchemaLocation::Unknown
}

/// The paths of `names` in `dir` that already exist (any kind of entry).
#[must_use]
pub fn existing(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect()
}

/// Writes each `(name, text)` into `dir` (created when missing), each file
/// whole: a temporary file in `dir`, renamed over the target. Refuses, before
/// writing anything, when a target exists and `force` is false.
pub fn write_all(
    dir: &Path,
    files: &[(&str, &str)],
    force: bool,
) -> Result<Vec<PathBuf>, FilesError> {
    let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
    let found = existing(dir, &names);
    if !force && !found.is_empty() {
        return Err(FilesError::Exists { paths: found });
    }
    std::fs::create_dir_all(dir).map_err(|source| FilesError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for (name, text) in files {
        let path = dir.join(name);
        let io = |source| FilesError::Io {
            path: path.clone(),
            source,
        };
        let mut temp = tempfile::Builder::new()
            .prefix(".evalctl-export-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(io)?;
        // Masked as every output is: what the service holds is written, but
        // never a secret evalctl holds (an API key a manifest once put there).
        temp.write_all(crate::scrub::mask(text).as_bytes())
            .map_err(io)?;
        temp.as_file().sync_all().map_err(io)?;
        temp.persist(&path).map_err(|e| io(e.error))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, id: &str) -> ProjectRef {
        ProjectRef {
            name: name.into(),
            id: id.into(),
        }
    }

    #[test]
    fn slugs_are_safe_and_stable() {
        assert_eq!(slug("demo-project"), "demo-project");
        assert_eq!(slug("Support Bot (EU)!"), "support-bot-eu");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("プロジェクト"), "project");
        assert_eq!(slug("CON"), "con-project");
        assert_eq!(slug("com1"), "com1-project");
        assert_eq!(slug("snake_case"), "snake_case");
        assert_eq!(slug(&"x".repeat(300)).len(), MAX_SLUG);
    }

    #[test]
    fn collisions_resolve_deterministically() {
        let projects = [
            p("Demo Project", "1"),
            p("demo-project", "2"),
            p("demo project", "3"),
            p("demo-project-2", "4"),
            p("integrations", "5"),
        ];
        let names = file_names(&projects);
        assert_eq!(names["2"], "demo-project.yaml");
        assert_eq!(names["4"], "demo-project-2.yaml");
        assert_eq!(names["1"], "demo-project-3.yaml");
        assert_eq!(names["3"], "demo-project-4.yaml");
        assert_eq!(names["5"], "integrations-2.yaml");
        let mut reversed = projects.to_vec();
        reversed.reverse();
        assert_eq!(file_names(&reversed), names);
    }

    #[test]
    fn the_schema_is_found_in_an_ancestor() {
        let root = tempfile::tempdir().unwrap();
        let nested = root.path().join("config").join("prod");
        assert_eq!(schema_location(&nested), SchemaLocation::Unknown);
        std::fs::create_dir_all(root.path().join("schemas")).unwrap();
        std::fs::write(root.path().join("schemas").join(SCHEMA_FILE), "{}").unwrap();
        assert_eq!(
            schema_location(&nested),
            SchemaLocation::At(format!("../../schemas/{SCHEMA_FILE}"))
        );
        assert_eq!(
            schema_location(&nested.join("..").join("..")),
            SchemaLocation::At(format!("schemas/{SCHEMA_FILE}"))
        );
    }

    #[test]
    fn existing_files_are_refused_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let written = write_all(&target, &[("a.yaml", "a: 1\n")], false).unwrap();
        assert_eq!(written, [target.join("a.yaml")]);
        let err = write_all(
            &target,
            &[("a.yaml", "a: 2\n"), ("b.yaml", "b: 1\n")],
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("a.yaml"), "{err}");
        assert!(!target.join("b.yaml").exists(), "nothing is written");
        write_all(&target, &[("a.yaml", "a: 2\n")], true).unwrap();
        assert_eq!(
            std::fs::read_to_string(target.join("a.yaml")).unwrap(),
            "a: 2\n"
        );
        let leftovers: Vec<_> = std::fs::read_dir(&target)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
}

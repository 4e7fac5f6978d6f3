//! `evalctl scorers …`: the scorer catalog.
//!
//! - `scorers list`: every scorer the credentials can see (name, type, latest
//!   version and its id; `--versions` adds every version), sorted by name.
//! - `scorers usage SCORER`: the projects that use a scorer version (spec
//!   operation 6, every page). `SCORER` is a name (its latest version),
//!   `NAME@VERSION` (e.g. `correctness@3`), or an id: a version's, or a
//!   scorer's (its latest version). A name that is not in the catalog is a
//!   usage error (64) with the nearest names.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use futures::future::try_join_all;
use serde::Serialize;

use crate::api::ScorerType;
use crate::cli::{ScorerListArgs, ScorerSelector, ScorerUsageArgs, ScorersCommand};
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::plan::resolve::ResolveError;
use crate::reconcile::read::catalog::read_catalog;
use crate::render::Format;
use crate::scrub::escape_controls;
use crate::state::{Catalog, CatalogScorer, VersionRef};
use crate::suggest::nearest;

use super::connect::{Connection, connect};

/// Runs `evalctl scorers …`.
pub async fn run(command: &ScorersCommand, printer: &Printer) -> Result<ExitStatus, Error> {
    match command {
        ScorersCommand::List(args) => list(args, printer).await,
        ScorersCommand::Usage(args) => usage(args, printer).await,
    }
}

/// One scorer as `scorers list` shows it.
#[derive(Debug, Serialize)]
struct Listed {
    name: String,
    id: String,
    scorer_type: ScorerType,
    #[serde(skip_serializing_if = "Option::is_none")]
    latest_version: Option<Version>,
    #[serde(skip_serializing_if = "Option::is_none")]
    versions: Option<Vec<Version>>,
}

/// A version: its number and id.
#[derive(Debug, Clone, Serialize)]
struct Version {
    version: i64,
    id: String,
}

impl From<&VersionRef> for Version {
    fn from(v: &VersionRef) -> Self {
        Version {
            version: v.version,
            id: v.id.clone(),
        }
    }
}

async fn list(args: &ScorerListArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    let connection = connect(&args.live).map_err(Error::Connect)?;
    let catalog = read_catalog(&connection.client, &BTreeSet::new()).await?;
    let mut scorers: Vec<&CatalogScorer> = catalog.scorers.iter().collect();
    scorers.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    let versions = if args.versions {
        let reads = scorers.iter().map(|s| versions_of(&connection, &s.id));
        Some(try_join_all(reads).await?)
    } else {
        None
    };
    let listed: Vec<Listed> = scorers
        .iter()
        .enumerate()
        .map(|(i, s)| Listed {
            name: s.name.clone(),
            id: s.id.clone(),
            scorer_type: s.scorer_type.clone(),
            latest_version: s.latest_version.as_ref().map(Version::from),
            versions: versions.as_ref().and_then(|v| v.get(i).cloned()),
        })
        .collect();
    printer.out(&match args.output {
        Format::Json => json(&serde_json::json!({ "scorers": listed })),
        Format::Text | Format::Markdown => list_text(&listed),
    });
    Ok(ExitStatus::Success)
}

/// Every version of a scorer, ascending.
async fn versions_of(connection: &Connection, scorer_id: &str) -> Result<Vec<Version>, Error> {
    let mut versions: Vec<Version> = connection
        .client
        .list_scorer_versions(scorer_id)
        .await?
        .iter()
        .map(|v| Version {
            version: v.version,
            id: v.id.clone(),
        })
        .collect();
    versions.sort_by_key(|v| v.version);
    Ok(versions)
}

/// The list as a table. Names and ids read from the service have their control
/// characters escaped, as plans show them.
fn list_text(listed: &[Listed]) -> String {
    let width = |f: &dyn Fn(&Listed) -> usize, title: &str| {
        listed.iter().map(f).chain([title.len()]).max().unwrap_or(0)
    };
    let name_w = width(&|l| escape_controls(&l.name).chars().count(), "NAME");
    let type_w = width(&|l| l.scorer_type.as_str().len(), "TYPE");
    let mut out = format!(
        "{:name_w$}  {:type_w$}  {:7}  LATEST VERSION ID\n",
        "NAME", "TYPE", "LATEST"
    );
    for l in listed {
        let (latest, latest_id) = l
            .latest_version
            .as_ref()
            .map_or(("-".to_owned(), "-"), |v| {
                (format!("v{}", v.version), v.id.as_str())
            });
        let _ = writeln!(
            out,
            "{:name_w$}  {:type_w$}  {latest:7}  {}",
            escape_controls(&l.name),
            l.scorer_type.as_str(),
            escape_controls(latest_id)
        );
        for v in l.versions.iter().flatten() {
            let number = format!("v{}", v.version);
            let _ = writeln!(
                out,
                "{:name_w$}  {:type_w$}  {number:7}  {}",
                "",
                "",
                escape_controls(&v.id)
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{} scorer{}. `evalctl scorers usage NAME[@VERSION]` lists the projects that use one.",
        listed.len(),
        if listed.len() == 1 { "" } else { "s" }
    );
    out
}

/// The scorer version `scorers usage` asks about.
struct Chosen {
    /// The version's id.
    id: String,
    /// The scorer's name and the version's number, when known.
    named: Option<(String, i64)>,
}

async fn usage(args: &ScorerUsageArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    let connection = connect(&args.live).map_err(Error::Connect)?;
    let chosen = choose(&connection, &args.scorer).await?;
    let mut projects = connection
        .client
        .scorer_version_projects(&chosen.id)
        .await?;
    projects.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    let what = match &chosen.named {
        Some((name, version)) => format!(
            "scorer `{}` v{version} ({})",
            escape_controls(name),
            escape_controls(&chosen.id)
        ),
        None => format!("scorer version {}", escape_controls(&chosen.id)),
    };
    match args.output {
        Format::Json => {
            let mut doc = serde_json::json!({
                "scorer_version_id": chosen.id,
                "total_count": projects.len(),
                "projects": projects.iter().map(|p| serde_json::json!({
                    "id": p.id, "name": p.name,
                    "num_logstreams": p.num_logstreams, "num_experiments": p.num_experiments,
                })).collect::<Vec<_>>(),
            });
            if let (Some((name, version)), Some(map)) = (&chosen.named, doc.as_object_mut()) {
                map.insert("scorer".to_owned(), serde_json::json!(name));
                map.insert("version".to_owned(), serde_json::json!(version));
            }
            printer.out(&json(&doc));
        }
        Format::Text | Format::Markdown => {
            if projects.is_empty() {
                printer.out(&format!("No project uses {what}.\n"));
            } else {
                let mut text = format!("{} project(s) use {what}:\n", projects.len());
                for p in &projects {
                    let _ = writeln!(
                        text,
                        "  {}  ({})",
                        escape_controls(&p.name),
                        escape_controls(&p.id)
                    );
                }
                printer.out(&text);
            }
        }
    }
    Ok(ExitStatus::Success)
}

/// Resolves what the user named to one scorer version.
async fn choose(connection: &Connection, selector: &ScorerSelector) -> Result<Chosen, Error> {
    let catalog = read_catalog(&connection.client, &BTreeSet::new()).await?;
    match selector {
        ScorerSelector::Id(id) => match catalog.by_id(id) {
            // A scorer's id: its latest version.
            Some(scorer) => latest(connection, scorer).await,
            // Anything else is taken as a version's id, as the service knows it.
            None => Ok(Chosen {
                id: id.clone(),
                named: None,
            }),
        },
        ScorerSelector::Name { name, version } => {
            let scorer = by_name(&catalog, name)?;
            match version {
                None => latest(connection, scorer).await,
                Some(number) => {
                    let versions = versions_of(connection, &scorer.id).await?;
                    match versions.iter().find(|v| v.version == *number) {
                        Some(v) => Ok(Chosen {
                            id: v.id.clone(),
                            named: Some((scorer.name.clone(), v.version)),
                        }),
                        None => Err(Error::UnknownScorer(ResolveError::UnknownVersion {
                            scorer: scorer.name.clone(),
                            number: *number,
                            known: versions.iter().map(|v| v.version).collect(),
                        })),
                    }
                }
            }
        }
    }
}

/// The one scorer named `name`, or why there is none.
fn by_name<'c>(catalog: &'c Catalog, name: &str) -> Result<&'c CatalogScorer, Error> {
    let matches: Vec<&CatalogScorer> = catalog.scorers.iter().filter(|s| s.name == name).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::UnknownScorer(ResolveError::UnknownName {
            name: name.to_owned(),
            suggestions: nearest(name, catalog.scorers.iter().map(|s| s.name.as_str())),
        })),
        several => Err(Error::UnknownScorer(ResolveError::AmbiguousName {
            name: name.to_owned(),
            ids: several.iter().map(|s| s.id.clone()).collect(),
        })),
    }
}

/// The latest version of `scorer`: as the catalog reports it, else the
/// highest of its versions.
async fn latest(connection: &Connection, scorer: &CatalogScorer) -> Result<Chosen, Error> {
    let version = match &scorer.latest_version {
        Some(v) => Some(Version::from(v)),
        None => versions_of(connection, &scorer.id).await?.pop(),
    };
    let version = version.ok_or_else(|| {
        Error::UnknownScorer(ResolveError::UnknownVersion {
            scorer: scorer.name.clone(),
            number: 1,
            known: Vec::new(),
        })
    })?;
    Ok(Chosen {
        id: version.id,
        named: Some((scorer.name.clone(), version.version)),
    })
}

fn json(doc: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(doc).unwrap_or_default();
    text.push('\n');
    text
}

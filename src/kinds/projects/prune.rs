//! Deleting projects: which live projects a repo owns without declaring
//! them, what deleting each would destroy, and the plan's delete.
//!
//! A project is never "ours" because it exists: evalctl reads only the
//! projects the manifests name. A repo says which others it owns with
//! `prune_projects:` in its `kind: Settings` document, names or `*`
//! patterns (`team-a-*`); a live project matching one that no `kind:
//! Project` document declares (by name, by id, or by a name of its
//! `renamed_from`), whatever the `--target`s declare, is undeclared. It is
//! read only with `--prune` (one listing of the projects, and one log
//! stream search of each undeclared one, for its traces), and deleted only
//! with `--allow-destroy` too; without it, a note says what would be lost.
//! `--target` narrows further: a delete is planned only where the targets
//! select its `project[P]`.

use crate::kinds::KindOp;
use std::collections::BTreeSet;

use super::address::ProjectAddress;
use super::ops::ProjectOp;
use super::plan::{Named, traces};
use crate::client::Client;
use crate::manifest::set::ManifestSet;
use crate::plan::address::Address;
use crate::plan::types::{Action, NoteKind, Operation};
use crate::plan::{Draft, PlanOptions, Planner, RunKind, fingerprint};
use crate::reconcile::read::ReadError;
use crate::reconcile::read::projects::{FoundProject, list_projects};
use crate::reconcile::read::runs::list_runs;

/// What a repo owns without declaring it, as read for a plan with
/// `--prune`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectPrune {
    /// The names and patterns of `prune_projects`.
    pub patterns: Vec<String>,
    /// The names every `kind: Project` document declares (with their
    /// `renamed_from`), whatever the targets.
    pub declared_names: BTreeSet<String>,
    /// The ids they declare.
    pub declared_ids: BTreeSet<String>,
}

impl ProjectPrune {
    /// What `desired` owns without declaring, when `options` prune and its
    /// Settings name projects (`None` otherwise: nothing is read).
    pub fn of(desired: &ManifestSet, options: &PlanOptions) -> Option<ProjectPrune> {
        if !options.prune {
            return None;
        }
        let settings = desired.settings.as_ref()?;
        if settings.spec.prune_projects.is_empty() {
            return None;
        }
        let mut prune = ProjectPrune {
            patterns: settings
                .spec
                .prune_projects
                .iter()
                .map(|p| p.0.clone())
                .collect(),
            ..ProjectPrune::default()
        };
        for project in &desired.projects {
            let spec = &project.spec;
            prune.declared_names.extend(spec.name.iter().cloned());
            prune
                .declared_names
                .extend(spec.renamed_from.iter().cloned());
            prune.declared_ids.extend(spec.id.iter().cloned());
        }
        Some(prune)
    }

    /// Whether the live project `id`, `name` is owned and not declared.
    pub fn owns_undeclared(&self, id: &str, name: &str) -> bool {
        self.patterns.iter().any(|p| matches(p, name))
            && !self.declared_names.contains(name)
            && !self.declared_ids.contains(id)
    }

    /// What both own without declaring (a three-way plan reads once for
    /// the plans of two manifest sets; each plan checks its own again).
    #[must_use]
    pub fn union(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(mut a), Some(b)) => {
                a.patterns.extend(b.patterns);
                a.patterns.sort();
                a.patterns.dedup();
                a.declared_names = a
                    .declared_names
                    .intersection(&b.declared_names)
                    .cloned()
                    .collect();
                a.declared_ids = a
                    .declared_ids
                    .intersection(&b.declared_ids)
                    .cloned()
                    .collect();
                Some(a)
            }
            (a, b) => a.or(b),
        }
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any characters
/// (none included) and every other character for itself.
pub fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A live project a repo owns and does not declare: what deleting it
/// would destroy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveProject {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Its log streams, as the listing counts them.
    pub num_log_streams: Option<u64>,
    /// Its experiments, as the listing counts them.
    pub num_experiments: Option<u64>,
    /// The traces of its log streams, as their search counts them (`None`:
    /// one was not counted).
    pub num_traces: Option<u64>,
}

/// The live projects `prune` owns and does not declare, with what they
/// hold; `None` when nothing is pruned.
pub async fn read_undeclared(
    client: &Client,
    prune: Option<&ProjectPrune>,
) -> Result<Option<Vec<LiveProject>>, ReadError> {
    let Some(prune) = prune else {
        return Ok(None);
    };
    let listed = list_projects(client).await?;
    let owned = listed
        .into_iter()
        .filter(|p| prune.owns_undeclared(&p.id, &p.name));
    let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
    let mut out = Vec::new();
    for p in owned {
        let found = FoundProject {
            id: p.id.clone(),
            name: p.name.clone(),
        };
        let streams = list_runs(client, &found, RunKind::LogStream).await?;
        let num_traces = streams
            .iter()
            .map(|s| s.traffic.num_traces)
            .sum::<Option<u64>>();
        out.push(LiveProject {
            id: p.id,
            name: p.name,
            num_log_streams: count(p.num_logstreams),
            num_experiments: count(p.num_experiments),
            num_traces,
        });
    }
    out.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    Ok(Some(out))
}

/// What deleting `project` destroys, in words.
fn loss(project: &LiveProject) -> String {
    let counted = |n: Option<u64>, one: &str, many: &str| match n {
        Some(1) => format!("1 {one}"),
        Some(n) => format!("{} {many}", super::plan::thousands(n)),
        None => format!("its {many} (not counted)"),
    };
    format!(
        "{}, {} and {}",
        counted(project.num_log_streams, "log stream", "log streams"),
        counted(project.num_experiments, "experiment", "experiments"),
        traces(project.num_traces),
    )
}

/// Plans the deletes of `undeclared` (read for `desired`'s `--prune`): a
/// note without `--allow-destroy`, a delete with a warning with it.
pub(crate) fn plan_undeclared_projects(
    planner: &mut Planner<'_>,
    desired: &ManifestSet,
    undeclared: &[LiveProject],
) {
    // The read may have been made for more manifests (a three-way plan's):
    // only what these own and do not declare.
    let Some(prune) = ProjectPrune::of(desired, planner.options) else {
        return;
    };
    for project in undeclared {
        if !prune.owns_undeclared(&project.id, &project.name) {
            continue;
        }
        let address = Address::Project(ProjectAddress {
            project: project.name.clone(),
        });
        let loss = loss(project);
        if !planner.options.allow_destroy {
            planner.note(
                Some(address),
                NoteKind::Info,
                format!(
                    "project `{}` matches prune_projects and no manifest declares it; deleting it would destroy {loss}: give --allow-destroy with --prune to delete it",
                    project.name
                ),
            );
            continue;
        }
        let before = Named {
            name: &project.name,
        };
        let draft = Draft {
            address,
            action: Action::Delete,
            reason: "not declared, matches prune_projects".to_owned(),
            live_fingerprint: fingerprint::of(Some(&before)),
            operations: vec![Operation::Kind(KindOp::Project(ProjectOp::DeleteProject {
                project_id: project.id.clone(),
            }))],
        };
        let mut change = draft.change::<_, Named<'_>>(Some(&before), None);
        change.warnings.push(format!(
            "DESTROYS project `{}` with its {loss}, which cannot be recovered",
            project.name
        ));
        planner.changes.push(change);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names_with_stars_for_any_characters() {
        assert!(matches("team-a", "team-a"));
        assert!(!matches("team-a", "team-ab"));
        assert!(matches("team-*", "team-a"));
        assert!(matches("team-*", "team-"));
        assert!(!matches("team-*", "demo-project"));
        assert!(matches("*-sandbox", "a-sandbox"));
        assert!(!matches("*-sandbox", "a-sandbox-2"));
        assert!(matches("a*b*c", "abc"));
        assert!(matches("a*b*c", "a-b-b-c"));
        assert!(!matches("a*b*c", "acb"));
        assert!(!matches("ab*ba", "aba"), "the ends do not overlap");
    }

    #[test]
    fn a_declared_project_is_never_undeclared() {
        let prune = ProjectPrune {
            patterns: vec!["team-*".to_owned()],
            declared_names: ["team-a".to_owned()].into(),
            declared_ids: ["id-b".to_owned()].into(),
        };
        assert!(!prune.owns_undeclared("id-a", "team-a"));
        assert!(!prune.owns_undeclared("id-b", "team-b"));
        assert!(prune.owns_undeclared("id-c", "team-c"));
        assert!(!prune.owns_undeclared("id-d", "demo-project"));
    }

    #[test]
    fn the_loss_is_counted_in_words() {
        let project = LiveProject {
            id: "x".into(),
            name: "old".into(),
            num_log_streams: Some(2),
            num_experiments: Some(1),
            num_traces: Some(12_345),
        };
        assert_eq!(
            loss(&project),
            "2 log streams, 1 experiment and 12,345 traces"
        );
    }
}

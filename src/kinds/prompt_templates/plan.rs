//! Planning a project's prompt templates: a set keyed by name, each with
//! append-only, immutable versions.
//!
//! - A declared template that does not exist is created with its first
//!   version (`+ project[P].prompt_template[N]`).
//! - When the declared template or settings differ from the latest
//!   version's (settings the manifest leaves out are not compared; a new
//!   version carries them over from the latest), exactly one version is
//!   created (`+ project[P].prompt_template[N].version[K]`), its fields
//!   showing the template's text against the latest version's, long or
//!   multi-line text as a unified diff. An identical one creates nothing, so
//!   a second apply never adds a version.
//! - `selected_version: latest` (the default) follows the new version (the
//!   service selects a version when it creates it); a pinned number is
//!   selected again right after a version is created, and a changed pin is
//!   an update (`~ project[P].prompt_template[N]`).
//! - An undeclared template is deleted only with `--prune`.
//!
//! Global templates (`kind: PromptTemplate` documents) are planned the same
//! way, at `prompt_template[N]`, against the global listing, and only when
//! the repo has at least one such document: then every global template no
//! document declares is unmanaged (a note; deleted with `--prune`). A repo
//! without one leaves the global templates alone, whatever `--prune` says.

use crate::kinds::KindOp;
use serde::Serialize;

use super::address::PromptTemplateAddress;
use super::live::PromptTemplateState;
use super::normalize::NormVersion;
use super::ops::PromptTemplateOp;
use super::spec::PromptTemplateSpec;
use super::wire::{PromptTemplateCreate, PromptVersionCreate};
use crate::manifest::locate::FieldPath;
use crate::manifest::set::Located;
use crate::manifest::set::Origin;
use crate::manifest::types::ProjectSpec;
use crate::plan::address::Address;
use crate::plan::target::{Kind, Segment, Target};
use crate::plan::types::{Action, NoteKind, Operation};
use crate::plan::{Draft, Planner, fingerprint};
use crate::state::ProjectState;

/// The scope of a project's prompt templates, for `--target`.
pub fn scope(project: &str) -> Target {
    Target::scope(vec![
        Segment::named(Kind::Project, project),
        Segment::kind(Kind::PromptTemplate),
    ])
}

/// The scope of the global prompt templates, for `--target`.
pub fn global_scope() -> Target {
    Target::scope(vec![Segment::kind(Kind::PromptTemplate)])
}

/// A declared template, where it is declared.
struct Declared<'a> {
    origin: &'a Origin,
    field: FieldPath,
    spec: &'a PromptTemplateSpec,
}

/// A template as a plan shows it whole (a create or a delete).
#[derive(Debug, Serialize)]
struct NormTemplate<'a> {
    name: &'a str,
    #[serde(flatten)]
    version: NormVersion,
    selected_version: u32,
}

/// A template's selection, as an update shows it.
#[derive(Debug, Serialize)]
struct NormSelection {
    selected_version: u32,
}

/// Plans the prompt templates a project's `spec` declares, when the plan
/// reaches them.
pub(crate) fn plan_project(
    planner: &mut Planner<'_>,
    origin: &Origin,
    project: &str,
    spec: &ProjectSpec,
    live: &ProjectState,
) {
    if let Some(wanted) = &spec.prompt_templates
        && planner.options.reaches(&scope(project))
    {
        plan_prompt_templates(planner, origin, project, live, wanted);
    }
}

/// Plans the prompt templates of one project.
pub(crate) fn plan_prompt_templates(
    planner: &mut Planner<'_>,
    origin: &Origin,
    project: &str,
    live_project: &ProjectState,
    wanted: &[PromptTemplateSpec],
) {
    let live: &[PromptTemplateState] = live_project
        .parts
        .prompt_templates
        .as_deref()
        .unwrap_or_default();
    let declared: Vec<Declared<'_>> = wanted
        .iter()
        .enumerate()
        .map(|(i, spec)| Declared {
            origin,
            field: FieldPath::root().key("prompt_templates").index(i),
            spec,
        })
        .collect();
    plan_in(
        planner,
        Some(project),
        Some(&live_project.id),
        live,
        &declared,
    );
}

/// Plans the global prompt templates (`kind: PromptTemplate` documents)
/// against `live`, the global listing; nothing when there is no document.
pub(crate) fn plan_global_prompt_templates(
    planner: &mut Planner<'_>,
    live: &[PromptTemplateState],
    wanted: &[Located<PromptTemplateSpec>],
) {
    if wanted.is_empty() {
        return;
    }
    let mut declared: Vec<Declared<'_>> = Vec::new();
    for (i, doc) in wanted.iter().enumerate() {
        if let Some(first) = wanted[..i].iter().find(|d| d.spec.name == doc.spec.name) {
            planner.problem_at(
                &doc.origin,
                FieldPath::root().key("name"),
                format!(
                    "a second PromptTemplate document named `{}` (the first is at {}): a global template's name is unique",
                    doc.spec.name, first.origin
                ),
            );
            continue;
        }
        declared.push(Declared {
            origin: &doc.origin,
            field: FieldPath::root(),
            spec: &doc.spec,
        });
    }
    plan_in(planner, None, None, live, &declared);
}

/// The mass-change guard over the global templates: `changes` (the plan's,
/// as selected) deleting a share of the `live` global templates past
/// `limits` is one mass change of `global` (a project's templates are
/// guarded with the project's collections).
pub(crate) fn global_churn<'a>(
    changes: impl IntoIterator<Item = &'a crate::plan::ResourceChange>,
    live: &[PromptTemplateState],
    limits: crate::plan::GuardLimits,
) -> Option<crate::plan::MassChange> {
    let deleted = changes
        .into_iter()
        .filter(|c| {
            c.action == Action::Delete
                && matches!(&c.address, Address::PromptTemplate(a) if a.project.is_none())
        })
        .count();
    let live = live.len().max(deleted);
    (deleted > 0 && limits.exceeded_by(live, deleted)).then(|| crate::plan::MassChange {
        container: "global".to_owned(),
        objects: "prompt templates".to_owned(),
        live,
        deleted,
        replaced: 0,
    })
}

/// Plans the templates of a scope: `project` (its name, for addresses) and
/// `project_id` (for the calls), both `None` for the global ones.
fn plan_in(
    planner: &mut Planner<'_>,
    project: Option<&str>,
    project_id: Option<&str>,
    live: &[PromptTemplateState],
    wanted: &[Declared<'_>],
) {
    let mut used = vec![false; live.len()];
    let scope_id = || project_id.map(str::to_owned);
    for Declared {
        origin,
        field,
        spec,
    } in wanted
    {
        // The loader has read any `template_file` into `template`.
        let Some(text) = &spec.template else {
            planner.problem_at(
                origin,
                field.clone(),
                format!(
                    "prompt template `{}` has no template: give `template` or `template_file`",
                    spec.name
                ),
            );
            continue;
        };
        let declared = spec.declared_settings();
        let found = live
            .iter()
            .enumerate()
            .find(|(j, t)| !used[*j] && t.name == spec.name)
            .map(|(j, _)| j);
        let Some(index) = found else {
            if let Some(n) = spec.pinned().filter(|n| *n != 1) {
                planner.problem_at(
                    origin,
                    field.clone().key("selected_version"),
                    format!(
                        "prompt template `{}` does not exist yet: its first version is 1, so version {n} cannot be selected",
                        spec.name
                    ),
                );
                continue;
            }
            let after = NormTemplate {
                name: &spec.name,
                version: NormVersion::declared(text, &declared),
                selected_version: 1,
            };
            let draft = Draft {
                address: Address::PromptTemplate(PromptTemplateAddress::scoped(
                    project, &spec.name,
                )),
                action: Action::Create,
                reason: "declared, does not exist; created with its version 1".to_owned(),
                live_fingerprint: fingerprint::of::<PromptTemplateState>(None),
                operations: vec![Operation::Kind(KindOp::PromptTemplate(
                    PromptTemplateOp::CreatePromptTemplate {
                        project_id: scope_id(),
                        body: PromptTemplateCreate {
                            name: spec.name.clone(),
                            template: text.clone(),
                            settings: declared,
                        },
                    },
                ))],
            };
            planner
                .changes
                .push(draft.change::<NormTemplate<'_>, _>(None, Some(&after)));
            continue;
        };
        used[index] = true;
        let current = &live[index];
        let before = NormVersion::live(&current.latest, &declared);
        let after = NormVersion::declared(text, &declared);
        let new_version = !before.same(&after);
        let max = current.latest.version + u32::from(new_version);
        let wanted_selection = spec.pinned().unwrap_or(max);
        if wanted_selection > max {
            planner.problem_at(
                origin,
                field.clone().key("selected_version"),
                format!(
                    "prompt template `{}` has no version {wanted_selection}: its latest {} {max}",
                    spec.name,
                    if new_version { "will be" } else { "is" },
                ),
            );
            continue;
        }
        if new_version {
            let version = current.latest.version + 1;
            // What the manifest leaves out keeps the latest version's value.
            let mut settings = current.latest.settings.clone();
            settings.extend(declared.clone());
            let mut operations = vec![Operation::Kind(KindOp::PromptTemplate(
                PromptTemplateOp::CreatePromptVersion {
                    project_id: scope_id(),
                    template_id: current.id.clone(),
                    base_version: current.latest.version,
                    body: PromptVersionCreate {
                        template: text.clone(),
                        settings,
                    },
                },
            ))];
            let mut reason = format!(
                "the template or its settings differ from the latest version, {}",
                current.latest.version
            );
            if wanted_selection != version {
                // The service selects a version as it creates it: the pin is
                // put back right after.
                operations.push(Operation::Kind(KindOp::PromptTemplate(
                    PromptTemplateOp::SelectPromptVersion {
                        project_id: scope_id(),
                        template_id: current.id.clone(),
                        version: wanted_selection,
                    },
                )));
                reason.push_str(&format!("; version {wanted_selection} stays selected"));
            }
            let draft = Draft {
                address: Address::PromptTemplate(PromptTemplateAddress::version(
                    project, &spec.name, version,
                )),
                action: Action::Create,
                reason,
                live_fingerprint: fingerprint::of(Some(current)),
                operations,
            };
            let mut c = draft.change(Some(&before), Some(&after));
            c.created_by = current.created_by.clone();
            planner.changes.push(c);
        } else if wanted_selection != current.selected_version {
            let draft = Draft {
                address: Address::PromptTemplate(PromptTemplateAddress::scoped(
                    project, &spec.name,
                )),
                action: Action::Update,
                reason: format!(
                    "version {} is selected, {} is declared",
                    current.selected_version,
                    match spec.pinned() {
                        Some(n) => n.to_string(),
                        None => format!("the latest ({max})"),
                    }
                ),
                live_fingerprint: fingerprint::of(Some(current)),
                operations: vec![Operation::Kind(KindOp::PromptTemplate(
                    PromptTemplateOp::SelectPromptVersion {
                        project_id: scope_id(),
                        template_id: current.id.clone(),
                        version: wanted_selection,
                    },
                ))],
            };
            let mut c = draft.change(
                Some(&NormSelection {
                    selected_version: current.selected_version,
                }),
                Some(&NormSelection {
                    selected_version: wanted_selection,
                }),
            );
            c.created_by = current.created_by.clone();
            planner.changes.push(c);
        }
    }
    for (index, template) in live.iter().enumerate() {
        if used[index] {
            continue;
        }
        let address =
            Address::PromptTemplate(PromptTemplateAddress::scoped(project, &template.name));
        if planner.options.prune {
            let before = NormTemplate {
                name: &template.name,
                version: NormVersion::live(&template.latest, &template.latest.settings),
                selected_version: template.selected_version,
            };
            let draft = Draft {
                address,
                action: Action::Delete,
                reason: "not declared (--prune); every version goes with it".to_owned(),
                live_fingerprint: fingerprint::of(Some(template)),
                operations: vec![Operation::Kind(KindOp::PromptTemplate(
                    PromptTemplateOp::DeletePromptTemplate {
                        project_id: scope_id(),
                        template_id: template.id.clone(),
                    },
                ))],
            };
            let mut c = draft.change::<_, NormTemplate<'_>>(Some(&before), None);
            c.created_by = template.created_by.clone();
            planner.changes.push(c);
        } else {
            planner.note_by(
                template.created_by.clone(),
                Some(address),
                NoteKind::Unmanaged,
                format!(
                    "prompt template `{}` exists but is not declared (delete it with --prune)",
                    template.name
                ),
            );
        }
    }
}

/// The targets of the prompt templates a project's `spec` declares (what
/// `--target` may name that the manifests declare).
pub(crate) fn declared(project: &str, spec: &ProjectSpec, out: &mut Vec<Target>) {
    for t in spec.prompt_templates.iter().flatten() {
        out.push(Target::of(&Address::PromptTemplate(
            PromptTemplateAddress::template(project, &t.name),
        )));
    }
}

/// Plans the global prompt templates `wanted` declares against `live`
/// (`None`: not read), when the plan's options reach them.
pub(crate) fn plan_global(
    planner: &mut Planner<'_>,
    wanted: &[Located<PromptTemplateSpec>],
    live: Option<&[PromptTemplateState]>,
) {
    if let Some(first) = wanted.first()
        && planner.options.reaches(&global_scope())
    {
        match live {
            Some(all) => plan_global_prompt_templates(planner, all, wanted),
            None => planner.problem(&first.origin, "the global prompt templates were not read"),
        }
    }
}

/// The targets of the global prompt templates `declared` declares.
pub(crate) fn declared_global(declared: &[Located<PromptTemplateSpec>], out: &mut Vec<Target>) {
    for t in declared {
        out.push(Target::of(&Address::PromptTemplate(
            PromptTemplateAddress::scoped(None, &t.spec.name),
        )));
    }
}

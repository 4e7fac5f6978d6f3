//! Planning a project's annotation or feedback templates: a set keyed by name.
//!
//! `name` and `criteria` change in place (PATCH). `constraints` and
//! `include_explanation` cannot be patched: a change to them replaces the
//! template (delete, then create), flagged with a warning when ratings use it.
//! `criteria` and `include_explanation` left out of a manifest keep their live
//! values (a replacement carries them over); a new template gets the
//! service's defaults.
//! `renamed_from` lets a rename keep the template (and its ratings).
//!
//! Two live templates of one declared name are drift: the one created first
//! (`crate::state::templates::keeper_order`) is the declared one, the others
//! are deleted, with or without `--prune`.

use crate::kinds::templates::{TemplateAddress, TemplateKind};
use serde::Serialize;

use super::live::keeper_order;
use super::normalize::{NormTemplate, align_constraints};
use super::ops::{TemplateBody, TemplateOp};
use crate::kinds::KindOp;
use crate::kinds::templates::TemplateState;
use crate::kinds::templates::{
    AnnotationConstraints, FeedbackConstraints, TemplateCreate, TemplateUpdate,
};
use crate::manifest::types::ProjectSpec;
use crate::manifest::types::TemplateSpec;
use crate::plan::address::Address;
use crate::plan::target::Target;
use crate::plan::types::{Action, NoteKind, Operation};
use crate::plan::{Draft, Planner, find_by_name, fingerprint};
use crate::state::ProjectState;

/// A constraints type of a template kind.
pub(crate) trait Constraints: Serialize + Clone {
    /// Wraps a create body of this kind.
    fn body(create: TemplateCreate<Self>) -> TemplateBody;
}

impl Constraints for AnnotationConstraints {
    fn body(create: TemplateCreate<Self>) -> TemplateBody {
        TemplateBody::Annotation(create)
    }
}

impl Constraints for FeedbackConstraints {
    fn body(create: TemplateCreate<Self>) -> TemplateBody {
        TemplateBody::Feedback(create)
    }
}

/// The criteria and `include_explanation` a template is to have: what the
/// manifest says, and for what it leaves out, the live template's value (absent
/// means unmanaged) or, on a create, the service's default (none, false).
fn wanted_fields<C>(
    t: &TemplateSpec<C>,
    live: Option<&TemplateState<C>>,
) -> (Option<String>, bool) {
    let criteria = t
        .criteria
        .clone()
        .or_else(|| live.and_then(|l| l.criteria.clone()));
    let include_explanation = t
        .include_explanation
        .or(live.map(|l| l.include_explanation))
        .unwrap_or(false);
    (criteria, include_explanation)
}

fn norm_spec<C: Serialize>(t: &TemplateSpec<C>, live: Option<&TemplateState<C>>) -> NormTemplate {
    let (criteria, include_explanation) = wanted_fields(t, live);
    NormTemplate::new(
        &t.name,
        criteria.as_deref(),
        include_explanation,
        &t.constraints,
    )
}

fn create_body<C: Constraints>(
    t: &TemplateSpec<C>,
    live: Option<&TemplateState<C>>,
) -> TemplateBody {
    C::body(TemplateCreate {
        name: t.name.clone(),
        include_explanation: t
            .include_explanation
            .or(live.map(|l| l.include_explanation)),
        criteria: wanted_fields(t, live).0,
        constraints: t.constraints.clone(),
    })
}

fn usage_warning(usage: Option<i64>, what: &str) -> Option<String> {
    usage.filter(|n| *n > 0).map(|n| {
        format!("{n} rating(s) use this template; {what} leaves them without their template")
    })
}

/// Plans the annotation and feedback templates a project's `spec` declares,
/// each when the plan reaches them.
pub(crate) fn plan_project(
    planner: &mut Planner<'_>,
    project: &str,
    spec: &ProjectSpec,
    live: &ProjectState,
) {
    if let Some(wanted) = &spec.annotation_templates
        && planner
            .options
            .reaches(&TemplateKind::Annotation.scope(project))
    {
        plan_templates(
            planner,
            project,
            live,
            TemplateKind::Annotation,
            wanted,
            live.parts.annotation_templates.as_deref(),
        );
    }
    if let Some(wanted) = &spec.feedback_templates
        && planner
            .options
            .reaches(&TemplateKind::Feedback.scope(project))
    {
        plan_templates(
            planner,
            project,
            live,
            TemplateKind::Feedback,
            wanted,
            live.parts.feedback_templates.as_deref(),
        );
    }
}

/// Plans one kind of template of a project.
pub(crate) fn plan_templates<C: Constraints>(
    planner: &mut Planner<'_>,
    project: &str,
    live_project: &ProjectState,
    kind: TemplateKind,
    wanted: &[TemplateSpec<C>],
    live: Option<&[TemplateState<C>]>,
) {
    // In keeper order, so that a declared name pairs with the template kept.
    let mut live: Vec<&TemplateState<C>> = live.unwrap_or_default().iter().collect();
    live.sort_by(|a, b| keeper_order(a, b));
    if kind == TemplateKind::Feedback {
        planner.note(
            None,
            NoteKind::Detail,
            format!(
                "project `{project}`: feedback templates were read with the service's deprecated listing \
                 (GET /v2/projects/{{project_id}}/feedback/templates), the only listing it offers"
            ),
        );
    }
    let address = |name: &str| {
        Address::Template(TemplateAddress {
            project: project.to_owned(),
            kind,
            name: name.to_owned(),
        })
    };
    let mut used = vec![false; live.len()];
    for spec in wanted {
        let found = find_by_name(&live, &used, |t| &t.name, &spec.name, &spec.renamed_from);
        let Some(index) = found else {
            let after = norm_spec(spec, None);
            let draft = Draft {
                address: address(&spec.name),
                action: Action::Create,
                reason: "declared, does not exist".to_owned(),
                live_fingerprint: fingerprint::of::<TemplateState<C>>(None),
                operations: vec![Operation::Kind(KindOp::Template(
                    TemplateOp::CreateTemplate {
                        project_id: live_project.id.clone(),
                        body: create_body(spec, None),
                    },
                ))],
            };
            planner
                .changes
                .push(draft.change::<NormTemplate, _>(None, Some(&after)));
            continue;
        };
        used[index] = true;
        let current = live[index];
        let after = norm_spec(spec, Some(current));
        let mut before = NormTemplate::from_state(current);
        align_constraints(&mut before.constraints, &after.constraints);
        if before == after {
            continue;
        }
        if before.constraints != after.constraints
            || before.include_explanation != after.include_explanation
        {
            let what = if before.constraints != after.constraints {
                "constraints"
            } else {
                "include_explanation"
            };
            let draft = Draft {
                address: address(&spec.name),
                action: Action::Replace,
                reason: format!("{what} cannot be changed in place"),
                live_fingerprint: fingerprint::of(Some(current)),
                operations: vec![
                    Operation::Kind(KindOp::Template(TemplateOp::DeleteTemplate {
                        project_id: live_project.id.clone(),
                        kind,
                        template_id: current.id.clone(),
                    })),
                    Operation::Kind(KindOp::Template(TemplateOp::CreateTemplate {
                        project_id: live_project.id.clone(),
                        body: create_body(spec, Some(current)),
                    })),
                ],
            };
            let mut c = draft.change(Some(&before), Some(&after));
            c.warnings
                .extend(usage_warning(current.usage_count, "replacing it"));
            c.created_by = current.created_by.clone();
            planner.changes.push(c);
        } else {
            let reason = if before.name != after.name {
                format!("renamed from `{}`", before.name)
            } else {
                "criteria differ".to_owned()
            };
            let draft = Draft {
                address: address(&spec.name),
                action: Action::Update,
                reason,
                live_fingerprint: fingerprint::of(Some(current)),
                operations: vec![Operation::Kind(KindOp::Template(
                    TemplateOp::PatchTemplate {
                        project_id: live_project.id.clone(),
                        kind,
                        template_id: current.id.clone(),
                        body: TemplateUpdate {
                            name: spec.name.clone(),
                            criteria: after.criteria.clone(),
                        },
                    },
                ))],
            };
            planner
                .changes
                .push(draft.change(Some(&before), Some(&after)));
        }
    }
    for (index, template) in live.iter().copied().enumerate() {
        if used[index] {
            continue;
        }
        let duplicate = wanted.iter().any(|w| w.name == template.name);
        if duplicate || planner.options.prune {
            let before = NormTemplate::from_state(template);
            let reason = if duplicate {
                "a second template with this name (the one created first is kept)"
            } else {
                "not declared (--prune)"
            };
            let draft = Draft {
                address: address(&template.name),
                action: Action::Delete,
                reason: reason.to_owned(),
                live_fingerprint: fingerprint::of(Some(template)),
                operations: vec![Operation::Kind(KindOp::Template(
                    TemplateOp::DeleteTemplate {
                        project_id: live_project.id.clone(),
                        kind,
                        template_id: template.id.clone(),
                    },
                ))],
            };
            let mut c = draft.change::<_, NormTemplate>(Some(&before), None);
            c.warnings
                .extend(usage_warning(template.usage_count, "deleting it"));
            c.created_by = template.created_by.clone();
            planner.changes.push(c);
        } else {
            planner.note_by(
                template.created_by.clone(),
                Some(address(&template.name)),
                NoteKind::Unmanaged,
                format!(
                    "{} `{}` exists but is not declared (delete it with --prune)",
                    kind.as_str().replace('_', " "),
                    template.name
                ),
            );
        }
    }
}

/// The targets of the annotation and feedback templates a project's `spec`
/// declares (what `--target` may name that the manifests declare).
pub(crate) fn declared(project: &str, spec: &ProjectSpec, out: &mut Vec<Target>) {
    let annotation = spec
        .annotation_templates
        .iter()
        .flatten()
        .map(|t| (TemplateKind::Annotation, t.name.as_str()));
    let feedback = spec
        .feedback_templates
        .iter()
        .flatten()
        .map(|t| (TemplateKind::Feedback, t.name.as_str()));
    for (kind, name) in annotation.chain(feedback) {
        out.push(Target::of(&Address::Template(TemplateAddress {
            project: project.to_owned(),
            kind,
            name: name.to_owned(),
        })));
    }
}

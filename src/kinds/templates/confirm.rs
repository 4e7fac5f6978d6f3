//! A template's change as a saved plan checks it before applying (did the
//! template move since the plan?) and confirms it after (does it read back
//! as planned?): the read that holds it (its project's templates of its
//! kind), the live template the change is about (by the id its operation
//! names, or by name: `crate::reconcile::read::touched::lookup`), its
//! fingerprint, as the planner took it, and its comparable form.

use serde::Serialize;
use serde_json::Value;

use super::address::TemplateKind;
use super::normalize::{NormTemplate, align_constraints};
use super::ops::{TemplateBody, TemplateOp};
use super::read::{read_annotation_templates, read_feedback_templates};
use super::{AnnotationConstraints, FeedbackConstraints, TemplateState};
use crate::client::{ApiError, Client};
use crate::kinds::KindOp;
use crate::plan::fingerprint;
use crate::plan::{Address, Operation, ResourceChange};
use crate::reconcile::read::touched::{Moment, lookup};

/// A project's templates of one kind, as read.
pub enum Listed {
    /// Its annotation templates.
    Annotation(Vec<TemplateState<AnnotationConstraints>>),
    /// Its feedback templates.
    Feedback(Vec<TemplateState<FeedbackConstraints>>),
}

/// The read that holds a change's template, when it is a template's
/// change: its project's id and the template's kind.
pub fn read_of(change: &ResourceChange) -> Option<(&str, TemplateKind)> {
    let Address::Template(address) = &change.address else {
        return None;
    };
    match change.operations.first()? {
        Operation::Kind(KindOp::Template(op)) => Some((op.project_id(), address.kind)),
        _ => None,
    }
}

/// Reads a project's templates of `kind`.
pub async fn read(
    client: &Client,
    project_id: &str,
    kind: TemplateKind,
) -> Result<Listed, ApiError> {
    Ok(match kind {
        TemplateKind::Annotation => {
            Listed::Annotation(read_annotation_templates(client, project_id).await?)
        }
        TemplateKind::Feedback => {
            Listed::Feedback(read_feedback_templates(client, project_id).await?)
        }
    })
}

/// What a change's template looks like now (at `moment`): its fingerprint
/// and its comparable form (`None`: it does not exist).
pub fn observe(
    change: &ResourceChange,
    listed: &Listed,
    moment: Moment,
) -> (String, Option<Value>) {
    match listed {
        Listed::Annotation(all) => observe_in(change, all, moment),
        Listed::Feedback(all) => observe_in(change, all, moment),
    }
}

fn observe_in<C: Serialize>(
    change: &ResourceChange,
    all: &[TemplateState<C>],
    moment: Moment,
) -> (String, Option<Value>) {
    let Address::Template(address) = &change.address else {
        return (fingerprint::of::<TemplateState<C>>(None), None);
    };
    let existing = change.operations.iter().find_map(|op| match op {
        Operation::Kind(KindOp::Template(op)) => op.template_id(),
        _ => None,
    });
    let found = match lookup(change, moment, existing) {
        Some(id) => all.iter().find(|t| t.id == id),
        None => all.iter().find(|t| t.name == address.name),
    };
    (fingerprint::of(found), found.map(|t| comparable(t, change)))
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A template's comparable form, its constraints aligned with the ones the
/// change sends (a tree choice compares in the form it was declared in).
fn comparable<C: Serialize>(t: &TemplateState<C>, change: &ResourceChange) -> Value {
    let mut norm = NormTemplate::from_state(t);
    let declared = change.operations.iter().find_map(|op| match op {
        Operation::Kind(KindOp::Template(TemplateOp::CreateTemplate {
            body: TemplateBody::Annotation(b),
            ..
        })) => Some(json(&b.constraints)),
        Operation::Kind(KindOp::Template(TemplateOp::CreateTemplate {
            body: TemplateBody::Feedback(b),
            ..
        })) => Some(json(&b.constraints)),
        _ => None,
    });
    if let Some(declared) = declared {
        align_constraints(&mut norm.constraints, &declared);
    }
    json(&norm)
}

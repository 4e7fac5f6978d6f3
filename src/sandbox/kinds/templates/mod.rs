//! Feedback and annotation templates of a project (spec operations 7 and 8,
//! and the reference's list/create/get/patch/delete), one generic
//! implementation over the two constraint types.
//!
//! Create assigns an id, the next `position` in the project, `usage_count`
//! 0 and `created_by` the caller. Names are unique per project and kind: a
//! duplicate (on create or rename) is a 409. PATCH takes only `name` and
//! `criteria`. An annotation `tree_choice` stores both `choices_tree` and
//! `choices_tree_yaml`: given one, the sandbox derives the other; given both,
//! the tree wins and the YAML is re-derived from it (so the two never
//! disagree); given neither, 422.

pub mod routes;

use serde::Serialize;
use serde_json::Value;

use crate::api::{LocItem, ValidationError};
use crate::kinds::templates::ConstraintKind;
use crate::kinds::templates::{
    AnnotationConstraints, AnnotationTreeNode, FeedbackConstraints, Template, TemplateCreate,
    TemplateUpdate,
};

use crate::sandbox::fingerprint::new_id;
use crate::sandbox::persist::Records;
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::{State, TemplateRecord, UserRecord, now, to_json};

/// What distinguishes the two template kinds in the store.
pub trait TemplateKind: Clone + Serialize + ConstraintKind + Sized {
    /// For messages: `Annotation template` / `Feedback template`.
    const WHAT: &'static str;
    /// The stored templates of this kind.
    fn records(state: &State) -> &Records<TemplateRecord<Self>>;
    /// The stored templates of this kind, to change.
    fn records_mut(state: &mut State) -> &mut Records<TemplateRecord<Self>>;
    /// Completes the constraints as the service stores them, or 422s.
    fn normalize(self) -> Result<Self, ApiError>;
}

impl TemplateKind for AnnotationConstraints {
    const WHAT: &'static str = "Annotation template";
    fn records(state: &State) -> &Records<TemplateRecord<Self>> {
        &state.annotation_templates
    }
    fn records_mut(state: &mut State) -> &mut Records<TemplateRecord<Self>> {
        &mut state.annotation_templates
    }
    fn normalize(self) -> Result<Self, ApiError> {
        match self {
            AnnotationConstraints::TreeChoice {
                choices_tree,
                choices_tree_yaml,
            } => {
                let tree = match (choices_tree, choices_tree_yaml) {
                    (Some(tree), _) => tree,
                    (None, Some(yaml)) => tree_from_yaml(&yaml)?,
                    (None, None) => {
                        return Err(constraint_error(
                            "choices_tree",
                            "one of choices_tree and choices_tree_yaml is required",
                        ));
                    }
                };
                let yaml = tree_to_yaml(&tree)?;
                Ok(AnnotationConstraints::TreeChoice {
                    choices_tree: Some(tree),
                    choices_tree_yaml: Some(yaml),
                })
            }
            other => Ok(other),
        }
    }
}

impl TemplateKind for FeedbackConstraints {
    const WHAT: &'static str = "Feedback template";
    fn records(state: &State) -> &Records<TemplateRecord<Self>> {
        &state.feedback_templates
    }
    fn records_mut(state: &mut State) -> &mut Records<TemplateRecord<Self>> {
        &mut state.feedback_templates
    }
    fn normalize(self) -> Result<Self, ApiError> {
        Ok(self)
    }
}

fn constraint_error(field: &str, message: &str) -> ApiError {
    ApiError::invalid(vec![ValidationError::value_error(
        vec![
            LocItem::Key("body".into()),
            LocItem::Key("constraints".into()),
            LocItem::Key("tree_choice".into()),
            LocItem::Key(field.into()),
        ],
        None,
        message,
    )])
}

/// The YAML form of an annotation choice tree: a list of nodes, each with
/// `label`, `id` and `children`.
pub fn tree_to_yaml(tree: &[AnnotationTreeNode]) -> Result<String, ApiError> {
    serde_saphyr::to_string(&tree).map_err(|e| ApiError::Internal(format!("yaml: {e}")))
}

/// Reads the YAML form of an annotation choice tree, or 422s.
pub fn tree_from_yaml(yaml: &str) -> Result<Vec<AnnotationTreeNode>, ApiError> {
    serde_saphyr::from_str::<Vec<AnnotationTreeNode>>(yaml).map_err(|e| {
        let first = e.to_string();
        let first = first.lines().next().unwrap_or("invalid YAML").to_owned();
        constraint_error(
            "choices_tree_yaml",
            &format!("not a choice tree (a list of label/id/children nodes): {first}"),
        )
    })
}

fn conflict<C: TemplateKind>(name: &str) -> ApiError {
    ApiError::Conflict(format!(
        "{} named {name:?} already exists in this project",
        C::WHAT
    ))
}

impl State {
    fn template_index<C: TemplateKind>(
        &self,
        project_id: &str,
        template_id: &str,
    ) -> Result<usize, ApiError> {
        self.require_project(project_id)?;
        C::records(self)
            .iter()
            .position(|r| r.project_id == project_id && r.template.id == template_id)
            .ok_or_else(|| ApiError::not_found(C::WHAT))
    }

    /// Lists a project's templates of one kind, by position.
    pub fn list_templates<C: TemplateKind>(&self, project_id: &str) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        let mut list: Vec<&Template<C>> = C::records(self)
            .iter()
            .filter(|r| r.project_id == project_id)
            .map(|r| &r.template)
            .collect();
        list.sort_by_key(|t| t.position);
        to_json(&list)
    }

    /// Gets one template.
    pub fn get_template<C: TemplateKind>(
        &self,
        project_id: &str,
        template_id: &str,
    ) -> Result<Value, ApiError> {
        let i = self.template_index::<C>(project_id, template_id)?;
        to_json(&C::records(self)[i].template)
    }

    /// Creates a template (see the module docs).
    pub fn create_template<C: TemplateKind>(
        &mut self,
        project_id: &str,
        request: TemplateCreate<C>,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        let siblings = || {
            C::records(self)
                .iter()
                .filter(|r| r.project_id == project_id)
        };
        if siblings().any(|r| r.template.name == request.name) {
            return Err(conflict::<C>(&request.name));
        }
        let position = siblings()
            .map(|r| r.template.position + 1)
            .max()
            .unwrap_or(0);
        let template = Template {
            id: new_id(),
            name: request.name,
            include_explanation: request.include_explanation.unwrap_or(false),
            criteria: request.criteria,
            constraints: request.constraints.normalize()?,
            created_at: now(),
            created_by: Some(caller.id.clone()),
            position,
            usage_count: Some(0),
        };
        let out = to_json(&template)?;
        C::records_mut(self).push(TemplateRecord {
            project_id: project_id.to_owned(),
            template,
        });
        Ok(out)
    }

    /// PATCH: changes `name` and `criteria`.
    pub fn update_template<C: TemplateKind>(
        &mut self,
        project_id: &str,
        template_id: &str,
        request: TemplateUpdate,
    ) -> Result<Value, ApiError> {
        let i = self.template_index::<C>(project_id, template_id)?;
        if C::records(self).iter().any(|r| {
            r.project_id == project_id
                && r.template.id != template_id
                && r.template.name == request.name
        }) {
            return Err(conflict::<C>(&request.name));
        }
        let record = &mut C::records_mut(self)[i];
        record.template.name = request.name;
        record.template.criteria = request.criteria;
        to_json(&record.template)
    }

    /// DELETE a template.
    pub fn delete_template<C: TemplateKind>(
        &mut self,
        project_id: &str,
        template_id: &str,
    ) -> Result<(), ApiError> {
        let i = self.template_index::<C>(project_id, template_id)?;
        C::records_mut(self).remove(i);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_yaml_round_trips() {
        let tree = vec![AnnotationTreeNode {
            label: "Quality: good".into(),
            id: "good".into(),
            children: vec![AnnotationTreeNode {
                label: "very \"good\"".into(),
                id: "very-good".into(),
                children: vec![],
            }],
        }];
        let yaml = tree_to_yaml(&tree).unwrap();
        assert_eq!(tree_from_yaml(&yaml).unwrap(), tree);
        assert!(tree_from_yaml("just: a map").is_err());
        // Hostile nesting within the schema's 10,000 characters is an error,
        // not a stack overflow.
        let deep = format!(
            "{}{}",
            "[{label: a, id: a, children: ".repeat(300),
            "[]}]".repeat(300)
        );
        assert!(deep.len() <= 10_000);
        let _ = tree_from_yaml(&deep);
        let deeper = format!("{}{}", "[{children: ".repeat(700), "]}".repeat(700));
        assert!(deeper.len() <= 10_000);
        assert!(tree_from_yaml(&deeper).is_err());
        let c = AnnotationConstraints::TreeChoice {
            choices_tree: None,
            choices_tree_yaml: Some(yaml.clone()),
        }
        .normalize()
        .unwrap();
        assert_eq!(
            c,
            AnnotationConstraints::TreeChoice {
                choices_tree: Some(tree),
                choices_tree_yaml: Some(yaml)
            }
        );
    }
}

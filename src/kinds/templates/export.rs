//! Live templates written as manifest specs (export): sorted by name, the
//! first the service lists of each name kept (the one `plan` pairs with it),
//! constraints as users write them.

use crate::manifest::types::ProjectSpec;
use crate::state::ProjectState;
use std::collections::BTreeSet;

use super::{AnnotationConstraints, FeedbackConstraints, TemplateState};
use crate::manifest::types::TemplateSpec;

/// A project's annotation templates as specs; a second template of one name
/// is a warning.
pub fn annotation(
    project: &str,
    live: &[TemplateState<AnnotationConstraints>],
    warnings: &mut Vec<String>,
) -> Vec<TemplateSpec<AnnotationConstraints>> {
    let what = format!("annotation templates of project `{project}`");
    templates(live, &what, warnings, |c| match c {
        // The service derives the YAML from the tree: the tree is what users write.
        AnnotationConstraints::TreeChoice {
            choices_tree: Some(tree),
            choices_tree_yaml: Some(_),
        } => AnnotationConstraints::TreeChoice {
            choices_tree: Some(tree.clone()),
            choices_tree_yaml: None,
        },
        other => other.clone(),
    })
}

/// A project's feedback templates as specs; a second template of one name is
/// a warning.
pub fn feedback(
    project: &str,
    live: &[TemplateState<FeedbackConstraints>],
    warnings: &mut Vec<String>,
) -> Vec<TemplateSpec<FeedbackConstraints>> {
    let what = format!("feedback templates of project `{project}`");
    templates(live, &what, warnings, Clone::clone)
}

/// Templates sorted by name, the first listed of each name (the one `plan`
/// pairs with it); `constraints` maps live constraints to what users write.
fn templates<C: Clone>(
    live: &[TemplateState<C>],
    what: &str,
    warnings: &mut Vec<String>,
    constraints: impl Fn(&C) -> C,
) -> Vec<TemplateSpec<C>> {
    let mut seen = BTreeSet::new();
    let mut kept: Vec<&TemplateState<C>> = Vec::new();
    for t in live {
        if seen.insert(t.name.clone()) {
            kept.push(t);
        } else {
            warnings.push(format!(
                "{what}: a second template is named `{}`; only the first is exported",
                t.name
            ));
        }
    }
    kept.sort_by(|a, b| a.name.cmp(&b.name));
    kept.into_iter()
        .map(|t| TemplateSpec {
            name: t.name.clone(),
            renamed_from: Vec::new(),
            criteria: t.criteria.clone(),
            include_explanation: t.include_explanation.then_some(true),
            constraints: constraints(&t.constraints),
        })
        .collect()
}

/// Fills in the annotation and feedback templates of a project's exported
/// `spec` from `live`, when they were read.
pub fn export_project(live: &ProjectState, spec: &mut ProjectSpec, warnings: &mut Vec<String>) {
    spec.annotation_templates = live
        .parts
        .annotation_templates
        .as_ref()
        .map(|ts| annotation(&live.name, ts, warnings));
    spec.feedback_templates = live
        .parts
        .feedback_templates
        .as_ref()
        .map(|ts| feedback(&live.name, ts, warnings));
}

#[cfg(test)]
mod tests {
    use crate::export::tests::{catalog, project};
    use crate::export::to_spec::project_document;
    use crate::export::write::Body;
    use crate::kinds::templates::AnnotationConstraints;

    #[test]
    fn templates_are_sorted_with_trees_as_trees() {
        let mut warnings = Vec::new();
        let doc = project_document(&project(), &catalog(), true, &mut warnings);
        let Body::Project(spec) = doc.body else {
            panic!("a project")
        };
        let annotation = spec.annotation_templates.clone().unwrap();
        let names: Vec<&str> = annotation.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["stars", "tree"]);
        assert_eq!(annotation[0].include_explanation, Some(true));
        assert_eq!(annotation[1].include_explanation, None);
        assert!(matches!(
            &annotation[1].constraints,
            AnnotationConstraints::TreeChoice {
                choices_tree: Some(_),
                choices_tree_yaml: None
            }
        ));
    }

    /// What a document of a project with templates writes: their criteria
    /// escaped as every interpolated string (`$${`), constraints' defaults
    /// left out (`allow_other: false`, a tree node's `children: []`).
    #[test]
    fn documents_write_templates_escaped_and_without_constraint_defaults() {
        use std::collections::BTreeMap;

        use serde_json::{Value, json};

        use crate::export::write::{Document, document_value};
        use crate::kinds::templates::{AnnotationTreeNode, FeedbackConstraints};
        use crate::manifest::types::{ProjectSpec, TemplateSpec};

        let spec = ProjectSpec {
            name: Some("p".into()),
            id: None,
            log_streams: Vec::new(),
            experiments: Vec::new(),
            prompt_templates: None,
            protect_stages: None,
            prune_log_streams: false,
            renamed_from: Vec::new(),
            description: None,
            labels: None,
            annotation_templates: Some(vec![TemplateSpec {
                name: "t".into(),
                renamed_from: Vec::new(),
                criteria: Some("Use ${name} and $${x}".into()),
                include_explanation: None,
                constraints: AnnotationConstraints::TreeChoice {
                    choices_tree: Some(vec![AnnotationTreeNode {
                        label: "A".into(),
                        id: "a".into(),
                        children: Vec::new(),
                    }]),
                    choices_tree_yaml: None,
                },
            }]),
            feedback_templates: Some(vec![TemplateSpec {
                name: "c".into(),
                renamed_from: Vec::new(),
                criteria: None,
                include_explanation: None,
                constraints: FeedbackConstraints::Choice {
                    choices: vec!["yes".into(), "no".into()],
                    allow_other: false,
                },
            }]),
        };
        let doc = Document {
            preamble: vec!["About this.".into()],
            body: Body::Project(Box::new(spec)),
            comments: BTreeMap::new(),
        };
        let value = Value::Object(document_value(&doc));
        assert_eq!(
            value,
            json!({"kind": "Project", "api_version": "evalctl/v1", "name": "p",
                "annotation_templates": [{"name": "t", "criteria": "Use $${name} and $$${x}",
                    "constraints": {"annotation_type": "tree_choice", "choices_tree": [{"label": "A", "id": "a"}]}}],
                "feedback_templates": [{"name": "c",
                    "constraints": {"feedback_type": "choice", "choices": ["yes", "no"]}}]})
        );
    }
}

//! Feedback and annotation templates (spec operations 7 and 8, and the
//! reference's list/create/patch/delete). The two records have the same fields
//! and differ in the discriminator inside `constraints`: `feedback_type` for
//! feedback, `annotation_type` for annotation; seven constraint kinds each.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A stored template (`AnnotationTemplateDB` / `FeedbackTemplateDB`), generic
/// over its constraints type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Template<C> {
    /// Id (uuid4).
    pub id: String,
    /// Name, 1 to 255 characters.
    pub name: String,
    /// Whether raters give an explanation.
    #[serde(default)]
    pub include_explanation: bool,
    /// Rating criteria, at least one character.
    #[serde(default)]
    pub criteria: Option<String>,
    /// What a rating may be.
    pub constraints: C,
    /// Creation time.
    pub created_at: String,
    /// Creator.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Position in the project's list.
    #[serde(default)]
    pub position: i64,
    /// Number of ratings using the template.
    #[serde(default)]
    pub usage_count: Option<i64>,
}

/// Body of a template create (`AnnotationTemplateCreate` / `FeedbackTemplateCreate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateCreate<C> {
    /// Name, 1 to 255 characters.
    pub name: String,
    /// Whether raters give an explanation (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_explanation: Option<bool>,
    /// Rating criteria.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// What a rating may be.
    pub constraints: C,
}

/// Body of a template PATCH: only `name` and `criteria` can change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateUpdate {
    /// Name, 1 to 255 characters.
    pub name: String,
    /// Rating criteria (null clears it).
    pub criteria: Option<String>,
}

/// An annotation template.
pub type AnnotationTemplate = Template<AnnotationConstraints>;
/// A feedback template.
pub type FeedbackTemplate = Template<FeedbackConstraints>;

/// Constraints of an annotation template, discriminated by `annotation_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "annotation_type", rename_all = "snake_case")]
pub enum AnnotationConstraints {
    /// Thumbs up or down.
    LikeDislike,
    /// A star rating.
    Star,
    /// An integer score between `min` and `max`.
    Score {
        /// Lowest score (>= 0).
        #[schemars(range(min = 0))]
        min: i64,
        /// Highest score (>= 0).
        #[schemars(range(min = 0))]
        max: i64,
    },
    /// Tags from a list.
    Tags {
        /// The tags (each 1 to 255 characters).
        #[schemars(inner(length(min = 1, max = 255)))]
        tags: Vec<String>,
        /// Whether other tags are allowed (default false).
        #[serde(default)]
        allow_other: bool,
    },
    /// Free text.
    Text,
    /// One choice from a list.
    Choice {
        /// The choices (each 1 to 255 characters).
        #[schemars(inner(length(min = 1, max = 255)))]
        choices: Vec<String>,
        /// Whether another answer is allowed (default false).
        #[serde(default)]
        allow_other: bool,
    },
    /// A choice in a tree.
    TreeChoice {
        /// The tree (at most 50 nodes per level).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(max = 50))]
        choices_tree: Option<Vec<AnnotationTreeNode>>,
        /// The same tree as YAML (the service derives one from the other).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(min = 1, max = 10000))]
        choices_tree_yaml: Option<String>,
    },
}

/// A node of an annotation choice tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AnnotationTreeNode {
    /// Label, 1 to 255 characters.
    #[schemars(length(min = 1, max = 255))]
    pub label: String,
    /// Id, 1 to 255 characters.
    #[schemars(length(min = 1, max = 255))]
    pub id: String,
    /// Children (at most 50).
    #[serde(default)]
    #[schemars(length(max = 50))]
    pub children: Vec<AnnotationTreeNode>,
}

/// Constraints of a feedback template, discriminated by `feedback_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "feedback_type", rename_all = "snake_case")]
pub enum FeedbackConstraints {
    /// Thumbs up or down.
    LikeDislike,
    /// A star rating.
    Star,
    /// An integer score between `min` and `max`.
    Score {
        /// Lowest score (>= 0).
        #[schemars(range(min = 0))]
        min: i64,
        /// Highest score (>= 0).
        #[schemars(range(min = 0))]
        max: i64,
    },
    /// Tags from a list.
    Tags {
        /// The tags (each 1 to 255 characters).
        #[schemars(inner(length(min = 1, max = 255)))]
        tags: Vec<String>,
        /// Whether other tags are allowed (default false).
        #[serde(default)]
        allow_other: bool,
    },
    /// Free text.
    Text,
    /// One choice from a list of 2 to 50.
    Choice {
        /// The choices (each 1 to 255 characters).
        #[schemars(length(min = 2, max = 50), inner(length(min = 1, max = 255)))]
        choices: Vec<String>,
        /// Whether another answer is allowed (default false).
        #[serde(default)]
        allow_other: bool,
    },
    /// A choice in a tree.
    TreeChoice {
        /// The tree (at least one node).
        #[schemars(length(min = 1))]
        choices_tree: Vec<FeedbackTreeNode>,
    },
}

/// A node of a feedback choice tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FeedbackTreeNode {
    /// Label, 1 to 255 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    pub label: Option<String>,
    /// Value, at least one character; unique among leaf paths.
    #[schemars(length(min = 1))]
    pub value: String,
    /// Children.
    #[serde(default)]
    pub children: Vec<FeedbackTreeNode>,
}

/// What both constraint enums can say about themselves.
pub trait ConstraintKind {
    /// The discriminator value (`like_dislike`, `star`, `score`, ...).
    fn kind(&self) -> &'static str;
}

macro_rules! constraint_kind {
    ($ty:ident) => {
        impl ConstraintKind for $ty {
            fn kind(&self) -> &'static str {
                match self {
                    $ty::LikeDislike => "like_dislike",
                    $ty::Star => "star",
                    $ty::Score { .. } => "score",
                    $ty::Tags { .. } => "tags",
                    $ty::Text => "text",
                    $ty::Choice { .. } => "choice",
                    $ty::TreeChoice { .. } => "tree_choice",
                }
            }
        }
    };
}

constraint_kind!(AnnotationConstraints);
constraint_kind!(FeedbackConstraints);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discriminators_differ_between_the_two_template_kinds() {
        let a: AnnotationConstraints =
            serde_json::from_str(r#"{"annotation_type":"score","min":0,"max":10}"#).unwrap();
        assert_eq!(a, AnnotationConstraints::Score { min: 0, max: 10 });
        let f: FeedbackConstraints =
            serde_json::from_str(r#"{"feedback_type":"like_dislike"}"#).unwrap();
        assert_eq!(f.kind(), "like_dislike");
        assert!(
            serde_json::from_str::<FeedbackConstraints>(r#"{"annotation_type":"star"}"#).is_err()
        );
    }
}

//! A project's feedback or annotation templates as the planner needs them:
//! what can be declared (name, criteria, whether raters explain,
//! constraints) and what a reviewer is warned about (how many ratings use
//! one, who created it). Positions are dropped; the creation time is kept
//! (not compared, not fingerprinted) because it decides which of two
//! templates of one name is kept ([`keeper_order`]).

use std::cmp::Ordering;

use serde::Serialize;

use crate::kinds::templates::Template;

/// A template, reduced; `C` is its kind's constraints type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemplateState<C> {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Rating criteria.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// Whether raters give an explanation.
    pub include_explanation: bool,
    /// What a rating may be.
    pub constraints: C,
    /// How many ratings use it, when the service says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_count: Option<i64>,
    /// The user id of its creator, when the service says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// When it was created, as the service says (RFC 3339). Never compared
    /// nor fingerprinted: it only orders copies of one name.
    #[serde(skip)]
    pub created_at: String,
}

impl<C> From<Template<C>> for TemplateState<C> {
    fn from(t: Template<C>) -> Self {
        TemplateState {
            id: t.id,
            name: t.name,
            criteria: t.criteria,
            include_explanation: t.include_explanation,
            constraints: t.constraints,
            usage_count: t.usage_count,
            created_by: t.created_by,
            created_at: t.created_at,
        }
    }
}

/// Which of two templates of one name is kept: the one created first
/// (`created_at` read as an instant; a value that does not parse sorts after
/// one that does, and two that do not compare as text), then the lowest id.
/// Every process that reads the same templates agrees, whatever order the
/// service lists them in; the planner keeps the first in this order and
/// deletes the others, and an apply that created a copy that is not first
/// deletes its own copy.
pub fn keeper_order<C>(a: &TemplateState<C>, b: &TemplateState<C>) -> Ordering {
    let instant = |t: &TemplateState<C>| chrono::DateTime::parse_from_rfc3339(&t.created_at).ok();
    let by_time = match (instant(a), instant(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.created_at.cmp(&b.created_at),
    };
    by_time.then_with(|| a.id.cmp(&b.id))
}

/// Templates as the service returns them, reduced as the readers reduce
/// each response (`None`: not read).
pub fn normalized<C>(listed: Option<Vec<Template<C>>>) -> Option<Vec<TemplateState<C>>> {
    listed.map(|ts| ts.into_iter().map(TemplateState::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: &str, created_at: &str) -> TemplateState<()> {
        TemplateState {
            id: id.to_owned(),
            name: "n".to_owned(),
            criteria: None,
            include_explanation: false,
            constraints: (),
            usage_count: None,
            created_by: None,
            created_at: created_at.to_owned(),
        }
    }

    #[test]
    fn the_first_created_then_the_lowest_id_is_kept() {
        let early = t("b", "2025-01-01T10:00:00.000001Z");
        let late = t("a", "2025-01-01T10:00:00.000002Z");
        assert_eq!(keeper_order(&early, &late), Ordering::Less);
        // The same instant written in another offset is the same instant: the id decides.
        let same = t("c", "2025-01-01T11:00:00.000001+01:00");
        assert_eq!(keeper_order(&early, &same), Ordering::Less);
        assert_eq!(keeper_order(&same, &early), Ordering::Greater);
        // A timestamp that does not parse never wins over one that does.
        let odd = t("0", "yesterday");
        assert_eq!(keeper_order(&late, &odd), Ordering::Less);
    }
}

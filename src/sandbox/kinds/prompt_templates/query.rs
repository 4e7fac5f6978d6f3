//! Listing prompt templates and versions: POST `/v2/templates/query` and
//! POST `/v2/templates/{template_id}/versions/query` (see the parent
//! module's docs for their filters and sorts).

use serde::Deserialize;
use serde_json::Value;

use super::{PromptTemplateRecord, PromptVersionRecord, Scope};
use crate::api::{FilterValue, Operator};
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::search::match_str;
use crate::sandbox::store::{State, UserRecord, cmp_time, paginate};

/// A filter of the global template query.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum TemplateFilter {
    /// By name.
    Name {
        /// Operator.
        operator: Operator,
        /// Value(s).
        value: FilterValue,
        /// Case sensitivity (default true).
        #[serde(default)]
        case_sensitive: Option<bool>,
    },
    /// By creator id.
    Creator {
        /// Operator (default `eq`).
        #[serde(default)]
        operator: Option<Operator>,
        /// Value(s).
        value: FilterValue,
    },
    /// Created for that project.
    UsedInProject {
        /// Project id.
        value: String,
    },
    /// Not created for that project.
    NotInProject {
        /// Project id.
        value: String,
    },
}

/// A sort of a query: `{name, ascending}`.
#[derive(Debug, Clone, Deserialize)]
pub struct QuerySort {
    /// Column.
    pub name: String,
    /// Ascending (default true).
    #[serde(default = "yes")]
    pub ascending: bool,
}

fn yes() -> bool {
    true
}

/// The body of the two queries.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct QueryBody {
    /// Filters (templates only).
    #[serde(default)]
    pub filters: Vec<TemplateFilter>,
    /// Sort.
    #[serde(default)]
    pub sort: Option<QuerySort>,
}

impl State {
    /// POST `/v2/templates/query` (`ListPromptTemplateResponse`).
    pub fn query_prompt_templates(
        &self,
        body: &QueryBody,
        caller: &UserRecord,
        starting_token: i64,
        limit: i64,
    ) -> Result<Value, ApiError> {
        let matches = |t: &PromptTemplateRecord, f: &TemplateFilter| match f {
            TemplateFilter::Name {
                operator,
                value,
                case_sensitive,
            } => match_str(&t.name, operator, value, case_sensitive.unwrap_or(true)),
            TemplateFilter::Creator { operator, value } => match_str(
                &t.created_by,
                operator.as_ref().unwrap_or(&Operator::Eq),
                value,
                true,
            ),
            TemplateFilter::UsedInProject { value } => {
                t.linked_project_ids.contains(&value.to_ascii_lowercase())
            }
            TemplateFilter::NotInProject { value } => {
                !t.linked_project_ids.contains(&value.to_ascii_lowercase())
            }
        };
        let mut found: Vec<&PromptTemplateRecord> = self
            .kinds
            .prompt_templates
            .iter()
            .filter(|t| t.project_id.is_none())
            .filter(|t| body.filters.iter().all(|f| matches(t, f)))
            .collect();
        let (column, ascending) = body
            .sort
            .as_ref()
            .map_or(("created_at", false), |s| (s.name.as_str(), s.ascending));
        found.sort_by(|a, b| {
            let ord = match column {
                "name" => a.name.cmp(&b.name),
                "updated_at" => cmp_time(&a.updated_at, &b.updated_at),
                _ => cmp_time(&a.created_at, &b.created_at),
            };
            let ord = if ascending { ord } else { ord.reverse() };
            ord.then_with(|| a.id.cmp(&b.id))
        });
        let (page, fields) = paginate(&found, starting_token, limit);
        let items = page
            .iter()
            .map(|t| self.prompt_json(t, caller))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Value::Object(fields.with_items("templates", items)))
    }

    /// POST `/v2/templates/{template_id}/versions/query`
    /// (`ListPromptTemplateVersionResponse`; default: by number, ascending).
    pub fn query_prompt_versions(
        &self,
        id: &str,
        body: &QueryBody,
        starting_token: i64,
        limit: i64,
    ) -> Result<Value, ApiError> {
        let i = self.prompt_index(&Scope::Global, id)?;
        let mut versions: Vec<&PromptVersionRecord> =
            self.kinds.prompt_templates[i].versions.iter().collect();
        let (column, ascending) = body
            .sort
            .as_ref()
            .map_or(("version", true), |s| (s.name.as_str(), s.ascending));
        versions.sort_by(|a, b| {
            let ord = match column {
                "created_at" | "updated_at" => cmp_time(&a.created_at, &b.created_at),
                _ => a.version.cmp(&b.version),
            };
            let ord = if ascending { ord } else { ord.reverse() };
            ord.then_with(|| a.version.cmp(&b.version))
        });
        let (page, fields) = paginate(&versions, starting_token, limit);
        let items = page.iter().map(|v| self.prompt_version_json(v)).collect();
        Ok(Value::Object(fields.with_items("versions", items)))
    }
}

//! Prompt templates as the service sends and takes them
//! (`/v2/projects/{project_id}/templates…` in the reference:
//! `BasePromptTemplateResponse`, `BasePromptTemplateVersionResponse`,
//! `CreatePromptTemplateWithVersionRequestBody`, `BasePromptTemplateVersion`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One message of a chat template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptMessage {
    /// `system`, `user`, `assistant`, `agent`, `function` or `tool`.
    pub role: PromptRole,
    /// The message's text.
    pub content: String,
}

/// A message's role (the reference's `MessageRole`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PromptRole {
    /// `agent`.
    Agent,
    /// `assistant`.
    Assistant,
    /// `function`.
    Function,
    /// `system`.
    System,
    /// `tool`.
    Tool,
    /// `user`.
    User,
}

impl PromptRole {
    /// As written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            PromptRole::Agent => "agent",
            PromptRole::Assistant => "assistant",
            PromptRole::Function => "function",
            PromptRole::System => "system",
            PromptRole::Tool => "tool",
            PromptRole::User => "user",
        }
    }
}

/// A template: one string, or a list of messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum PromptText {
    /// A single string.
    Text(String),
    /// Chat messages, in order.
    Messages(Vec<PromptMessage>),
}

impl PromptText {
    /// The template as text, as a plan diffs it: a string as it is, messages
    /// as `[role]` lines each followed by its content.
    pub fn as_text(&self) -> String {
        match self {
            PromptText::Text(s) => s.clone(),
            PromptText::Messages(messages) => {
                let mut out = String::new();
                for m in messages {
                    out.push('[');
                    out.push_str(m.role.as_str());
                    out.push_str("]\n");
                    out.push_str(&m.content);
                    if !m.content.ends_with('\n') {
                        out.push('\n');
                    }
                }
                out
            }
        }
    }
}

/// A version as the service returns it (fields evalctl does not use are
/// ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PromptVersionWire {
    /// Id.
    pub id: String,
    /// Its number, from 1.
    pub version: u32,
    /// The template.
    pub template: PromptText,
    /// Whether the template is sent raw (not rendered).
    #[serde(default)]
    pub raw: bool,
    /// Run settings, every field as the service stores it.
    #[serde(default)]
    pub settings: Map<String, Value>,
    /// Output type.
    #[serde(default)]
    pub output_type: Option<String>,
}

/// Who created an object.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PromptUser {
    /// User id.
    pub id: String,
}

/// A template as the service returns it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PromptTemplateWire {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// The selected version.
    pub selected_version: PromptVersionWire,
    /// The highest version number (the latest).
    pub max_version: u32,
    /// Every version, when the service includes them.
    #[serde(default)]
    pub all_versions: Option<Vec<PromptVersionWire>>,
    /// Its creator.
    #[serde(default)]
    pub created_by_user: Option<PromptUser>,
}

/// The body of a template's create (with its first version).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptTemplateCreate {
    /// Name.
    pub name: String,
    /// The first version's template.
    pub template: PromptText,
    /// The first version's settings (only those declared; the service fills
    /// in the rest).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub settings: Map<String, Value>,
}

/// The body of a new version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptVersionCreate {
    /// The template.
    pub template: PromptText,
    /// Its settings.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub settings: Map<String, Value>,
}

/// One page of the global prompt templates (POST `/v2/templates/query`).
#[derive(Debug, Clone, Deserialize)]
pub struct GlobalTemplatePage {
    /// The templates of this page.
    #[serde(default)]
    pub templates: Vec<PromptTemplateWire>,
    /// Pagination.
    #[serde(flatten)]
    pub page: crate::api::PageInfo,
}

impl crate::client::paginate::Paged for GlobalTemplatePage {
    fn page_info(&self) -> &crate::api::PageInfo {
        &self.page
    }
}

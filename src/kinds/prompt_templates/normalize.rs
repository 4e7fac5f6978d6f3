//! The comparable form of a prompt template's version: its template as text
//! (messages as `[role]` blocks, so a plan shows a unified diff of the text)
//! and the settings the manifest writes. Settings the manifest leaves out
//! are not compared, and numbers compare by value (`1` is `1.0`).

use serde::Serialize;
use serde_json::{Map, Value};

use super::live::PromptVersionState;
use super::wire::PromptText;

/// A version's content, as plans compare and show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormVersion {
    /// The template as text.
    pub template: String,
    /// Whether the template is a list of messages.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub messages: bool,
    /// The settings compared.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub settings: Map<String, Value>,
}

impl NormVersion {
    /// A declared version: its template and the settings written.
    pub fn declared(template: &PromptText, settings: &Map<String, Value>) -> Self {
        NormVersion {
            template: template.as_text(),
            messages: matches!(template, PromptText::Messages(_)),
            settings: settings.clone(),
        }
    }

    /// A live version, its settings reduced to the keys of `declared`.
    pub fn live(version: &PromptVersionState, declared: &Map<String, Value>) -> Self {
        let settings = declared
            .keys()
            .map(|k| {
                (
                    k.clone(),
                    version.settings.get(k).cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
        NormVersion {
            template: version.template.as_text(),
            messages: matches!(version.template, PromptText::Messages(_)),
            settings,
        }
    }

    /// Whether two versions hold the same content (numbers by value).
    pub fn same(&self, other: &NormVersion) -> bool {
        self.template == other.template
            && self.messages == other.messages
            && self.settings.len() == other.settings.len()
            && self
                .settings
                .iter()
                .all(|(k, v)| other.settings.get(k).is_some_and(|o| same_value(v, o)))
    }
}

/// Whether a live version holds `template` and every setting of `settings`.
pub fn holds(
    version: &PromptVersionState,
    template: &PromptText,
    settings: &Map<String, Value>,
) -> bool {
    NormVersion::live(version, settings).same(&NormVersion::declared(template, settings))
}

pub use crate::kinds::json::same_value;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_omitted_settings_are_not_compared() {
        let live = PromptVersionState {
            version: 2,
            template: PromptText::Text("Hi {name}".to_owned()),
            settings: json!({"temperature": 1, "max_tokens": 4096, "model_alias": "gpt-5.1"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
        let declared = json!({"temperature": 1.0})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(holds(
            &live,
            &PromptText::Text("Hi {name}".to_owned()),
            &declared
        ));
        let other = json!({"temperature": 0.5})
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(!holds(
            &live,
            &PromptText::Text("Hi {name}".to_owned()),
            &other
        ));
        assert!(!holds(
            &live,
            &PromptText::Text("Hi {who}".to_owned()),
            &declared
        ));
    }
}

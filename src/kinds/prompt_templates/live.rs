//! A project's prompt templates as the planner needs them: the name, which
//! version is selected, the latest version's template and settings (what a
//! new version is compared with), and who created it. Earlier versions are
//! immutable and never compared.

use serde::Serialize;
use serde_json::{Map, Value};

use super::wire::{PromptTemplateWire, PromptText, PromptVersionWire};

/// Settings fields the service fills in that are not run settings: never
/// compared, never sent.
const NOT_SETTINGS: &[&str] = &["known_models"];

/// A version's run settings without what is not a setting.
pub fn settings_of(mut settings: Map<String, Value>) -> Map<String, Value> {
    for key in NOT_SETTINGS {
        settings.remove(*key);
    }
    settings
}

/// One version, reduced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptVersionState {
    /// Its number.
    pub version: u32,
    /// The template.
    pub template: PromptText,
    /// Its run settings, as the service stores them.
    pub settings: Map<String, Value>,
}

impl From<PromptVersionWire> for PromptVersionState {
    fn from(v: PromptVersionWire) -> Self {
        PromptVersionState {
            version: v.version,
            template: v.template,
            settings: settings_of(v.settings),
        }
    }
}

/// A prompt template, reduced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptTemplateState {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// The selected version's number.
    pub selected_version: u32,
    /// The latest version (the highest number).
    pub latest: PromptVersionState,
    /// The user id of its creator, when the service says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

impl PromptTemplateState {
    /// The template as listed, when the listing holds its latest version
    /// (the selected one is the latest, or every version is included);
    /// otherwise the template, whose latest version (`max_version`) is to
    /// be fetched.
    pub fn from_wire(t: PromptTemplateWire) -> Result<Self, Box<PromptTemplateWire>> {
        let max = t.max_version;
        let latest = if t.selected_version.version == max {
            Some(t.selected_version.clone())
        } else {
            t.all_versions
                .as_ref()
                .and_then(|all| all.iter().find(|v| v.version == max).cloned())
        };
        match latest {
            Some(latest) => Ok(Self::with_latest(t, latest)),
            None => Err(Box::new(t)),
        }
    }

    /// The template with `latest` as its latest version.
    pub fn with_latest(t: PromptTemplateWire, latest: PromptVersionWire) -> Self {
        PromptTemplateState {
            id: t.id,
            name: t.name,
            selected_version: t.selected_version.version,
            latest: latest.into(),
            created_by: t.created_by_user.map(|u| u.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(selected: u32, max: u32, all: bool) -> PromptTemplateWire {
        let version = |n: u32| json!({"id": format!("v{n}"), "version": n, "template": format!("t{n}"), "settings": {"known_models": [], "temperature": 0.5}});
        let mut t = json!({"id": "t", "name": "n", "selected_version": version(selected), "max_version": max});
        if all {
            t["all_versions"] = (1..=max).map(version).collect();
        }
        serde_json::from_value(t).expect("a template")
    }

    #[test]
    fn the_latest_version_comes_from_the_listing_or_is_to_be_fetched() {
        let latest = PromptTemplateState::from_wire(wire(2, 2, false)).expect("selected is latest");
        assert_eq!((latest.selected_version, latest.latest.version), (2, 2));
        assert!(!latest.latest.settings.contains_key("known_models"));
        let pinned = PromptTemplateState::from_wire(wire(1, 3, true)).expect("all versions");
        assert_eq!((pinned.selected_version, pinned.latest.version), (1, 3));
        assert_eq!(pinned.latest.template, PromptText::Text("t3".into()));
        let fetch = PromptTemplateState::from_wire(wire(1, 3, false)).map(|_| ());
        assert_eq!(fetch.map_err(|t| t.max_version), Err(3));
    }
}

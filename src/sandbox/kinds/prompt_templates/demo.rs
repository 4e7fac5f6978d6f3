//! The prompt templates of the built-in demo fixture
//! (`crate::sandbox::fixture`), seeded through the registry's
//! [`crate::sandbox::kinds::seed_demo`]: the demo project's
//! `support-answer`.

use super::{PromptTemplateRecord, PromptVersionRecord, full_settings};
use crate::sandbox::fingerprint::stable_id;
use crate::sandbox::fixture::{ids, ts};
use crate::sandbox::kinds::KindRecords;
use crate::sandbox::store::ProjectRecord;

/// Adds the demo project's prompt templates to `records` (`by`: their
/// creator's id).
pub fn seed_demo(records: &mut KindRecords, project: &ProjectRecord, by: &str) {
    records.prompt_templates.push(support_answer(project, by));
}

/// The demo project's prompt template `support-answer`: version 1 a
/// string, version 2 (selected) messages with another temperature.
fn support_answer(project: &ProjectRecord, by: &str) -> PromptTemplateRecord {
    let name = "support-answer";
    let version = |n: i64, template: serde_json::Value, temperature: f64| {
        let mut settings = serde_json::Map::new();
        settings.insert("temperature".into(), temperature.into());
        PromptVersionRecord {
            id: stable_id(&format!("prompt-version:{}:{name}:v{n}", project.name)),
            version: n,
            template,
            raw: false,
            settings: full_settings(Some(settings)),
            output_type: None,
            created_by: by.to_owned(),
            created_at: ts(40 + n),
            model_changed: false,
            settings_changed: n > 1,
            content_changed: n > 1,
        }
    };
    PromptTemplateRecord {
        id: ids::prompt_template(&project.name, name),
        project_id: Some(project.id.clone()),
        name: name.to_owned(),
        created_by: by.to_owned(),
        created_at: ts(41),
        updated_at: ts(42),
        selected_version: 2,
        linked_project_ids: Vec::new(),
        versions: vec![
            version(1, "Answer the customer's question: {question}".into(), 0.7),
            version(
                2,
                serde_json::json!([
                    {"role": "system", "content": "You are a concise support agent."},
                    {"role": "user", "content": "{question}"}
                ]),
                0.2,
            ),
        ],
    }
}

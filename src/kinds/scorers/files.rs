//! Long texts kept in files beside the manifest, so a prompt is reviewed as
//! a prompt and code as code: `chain_poll_template.template_file`,
//! `chain_poll_template.metric_system_prompt_file`, `instructions_file`,
//! `user_prompt_file` and `code_file`, each relative to the manifest's
//! directory. The loader calls [`resolve`] on each Scorer document once it
//! is interpolated and validated: each file is read, as written (not
//! interpolated), into the field it stands for. A file that cannot be read,
//! is not UTF-8, is empty or larger than [`MAX_FILE_BYTES`], and a text
//! given both ways, is an issue at the field, which the loader reports at
//! its `file:line:column`.

use std::path::Path;

use serde_json::{Map, Value};

/// The largest file read.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// A problem with one file, at the JSON pointer of its field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIssue {
    /// Where, in the document.
    pub pointer: String,
    /// What is wrong, and what to fix.
    pub message: String,
}

/// The file fields: (object pointer, file field, the field it fills).
const FILES: &[(&str, &str, &str)] = &[
    ("/chain_poll_template", "template_file", "template"),
    (
        "/chain_poll_template",
        "metric_system_prompt_file",
        "metric_system_prompt",
    ),
    ("", "instructions_file", "instructions"),
    ("", "user_prompt_file", "user_prompt"),
    ("", "code_file", "code"),
];

/// Replaces each file field of the Scorer document `document` (read from
/// the manifest `manifest`) with the file's text.
pub fn resolve(manifest: &Path, document: &mut Value) -> Vec<FileIssue> {
    let mut issues = Vec::new();
    let dir = manifest.parent().unwrap_or_else(|| Path::new(""));
    for (at, file_field, field) in FILES {
        let Some(map) = object_at(document, at) else {
            continue;
        };
        let Some(file) = map
            .get(*file_field)
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        let pointer = format!("{at}/{file_field}");
        if map.contains_key(*field) {
            issues.push(FileIssue {
                pointer,
                message: format!("give `{field}` or `{file_field}`, not both"),
            });
            continue;
        }
        match read(&dir.join(&file)) {
            Ok(text) => {
                map.remove(*file_field);
                map.insert((*field).to_owned(), Value::String(text));
            }
            Err(why) => issues.push(FileIssue {
                pointer,
                message: format!(
                    "the file `{file}` (relative to the manifest's directory, `{}`) {why}",
                    dir.display()
                ),
            }),
        }
    }
    if document.get("scorer_type").and_then(Value::as_str) == Some("code")
        && document.get("code").is_none()
    {
        issues.push(FileIssue {
            pointer: String::new(),
            message: "a code scorer needs `code_file` (its Python file, beside the manifest)"
                .to_owned(),
        });
    }
    issues
}

fn object_at<'v>(document: &'v mut Value, pointer: &str) -> Option<&'v mut Map<String, Value>> {
    if pointer.is_empty() {
        document.as_object_mut()
    } else {
        document.pointer_mut(pointer)?.as_object_mut()
    }
}

fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a file".to_owned());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "is {} bytes, more than the {MAX_FILE_BYTES} a file may have",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())?;
    if text.is_empty() {
        return Err("is empty".to_owned());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn files_become_their_fields_and_problems_are_at_the_field() {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::create_dir_all(dir.path().join("prompts")).expect("prompts/");
        std::fs::write(
            dir.path().join("prompts/judge.txt"),
            "Is it {{ output }}?\n",
        )
        .expect("file");
        let manifest = dir.path().join("scorer.yaml");
        let mut doc = json!({"kind": "Scorer", "name": "j", "scorer_type": "llm",
            "chain_poll_template": {"template_file": "prompts/judge.txt", "metric_system_prompt_file": "prompts/missing.txt"},
            "instructions_file": "prompts/judge.txt", "instructions": "both"});
        let issues = resolve(&manifest, &mut doc);
        assert_eq!(
            doc["chain_poll_template"]["template"],
            "Is it {{ output }}?\n"
        );
        let at: Vec<&str> = issues.iter().map(|i| i.pointer.as_str()).collect();
        assert_eq!(
            at,
            [
                "/chain_poll_template/metric_system_prompt_file",
                "/instructions_file"
            ]
        );
        let mut code = json!({"kind": "Scorer", "name": "c", "scorer_type": "code"});
        assert_eq!(resolve(&manifest, &mut code).len(), 1);
    }
}

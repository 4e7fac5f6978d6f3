//! `template_file:` — a prompt template's text kept in a file beside the
//! manifest, so a prompt is reviewed as a prompt. The loader calls
//! [`resolve`] on each Project document once it is interpolated and
//! validated, and [`resolve_document`] on each PromptTemplate document (a
//! global template): each `template_file` (relative to the manifest's directory)
//! is read and becomes the `template` string, as written (the file's text is
//! not interpolated). A file that cannot be read, is not UTF-8, is empty or
//! larger than [`MAX_TEMPLATE_BYTES`], and a template given both ways or
//! neither, is an issue at the field, which the loader reports at its
//! `file:line:column`.

use std::path::Path;

use serde_json::Value;

/// The largest template file read.
pub const MAX_TEMPLATE_BYTES: u64 = 1024 * 1024;

/// A problem with one template's file, at the JSON pointer of its field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIssue {
    /// Where, in the document.
    pub pointer: String,
    /// What is wrong, and what to fix.
    pub message: String,
}

/// Replaces each `template_file` of the Project document `document` (read
/// from the manifest `manifest`) with the file's text as `template`.
pub fn resolve(manifest: &Path, document: &mut Value) -> Vec<FileIssue> {
    let mut issues = Vec::new();
    let dir = manifest.parent().unwrap_or_else(|| Path::new(""));
    let Some(templates) = document
        .get_mut("prompt_templates")
        .and_then(Value::as_array_mut)
    else {
        return issues;
    };
    for (i, template) in templates.iter_mut().enumerate() {
        if let Some(map) = template.as_object_mut() {
            resolve_one(dir, map, &format!("/prompt_templates/{i}"), &mut issues);
        }
    }
    issues
}

/// Replaces the `template_file` of the PromptTemplate document `document`
/// (a global template, read from the manifest `manifest`) with the file's
/// text as `template`.
pub fn resolve_document(manifest: &Path, document: &mut Value) -> Vec<FileIssue> {
    let mut issues = Vec::new();
    let dir = manifest.parent().unwrap_or_else(|| Path::new(""));
    if let Some(map) = document.as_object_mut() {
        resolve_one(dir, map, "", &mut issues);
    }
    issues
}

/// Reads one template's `template_file` (relative to `dir`) into
/// `template`; `at` is the template's JSON pointer.
fn resolve_one(
    dir: &Path,
    map: &mut serde_json::Map<String, Value>,
    at: &str,
    issues: &mut Vec<FileIssue>,
) {
    let file = map
        .get("template_file")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let inline = map.contains_key("template");
    let Some(file) = file else {
        if !inline {
            issues.push(FileIssue {
                pointer: at.to_owned(),
                message: "a prompt template needs `template` (a string or a list of messages) or `template_file` (a file beside the manifest)".to_owned(),
            });
        }
        return;
    };
    let pointer = format!("{at}/template_file");
    if inline {
        issues.push(FileIssue {
            pointer,
            message: "give `template` or `template_file`, not both".to_owned(),
        });
        return;
    }
    match read(&dir.join(&file)) {
        Ok(text) => {
            map.remove("template_file");
            map.insert("template".to_owned(), Value::String(text));
        }
        Err(why) => issues.push(FileIssue {
            pointer,
            message: format!(
                "the template file `{file}` (relative to the manifest's directory, `{}`) {why}",
                dir.display()
            ),
        }),
    }
}

fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a file".to_owned());
    }
    if meta.len() > MAX_TEMPLATE_BYTES {
        return Err(format!(
            "is {} bytes, more than the {MAX_TEMPLATE_BYTES} a template may have",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())?;
    if text.is_empty() {
        return Err("is empty; a template has at least one character".to_owned());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_file_becomes_the_template_and_problems_are_at_the_field() {
        let dir = tempfile::tempdir().expect("a directory");
        std::fs::create_dir_all(dir.path().join("prompts")).expect("prompts/");
        std::fs::write(dir.path().join("prompts/a.txt"), "Hello {name}\n").expect("a.txt");
        std::fs::write(dir.path().join("prompts/empty.txt"), "").expect("empty.txt");
        let manifest = dir.path().join("project.yaml");
        let mut doc = json!({"kind": "Project", "prompt_templates": [
            {"name": "a", "template_file": "prompts/a.txt"},
            {"name": "b", "template_file": "prompts/missing.txt"},
            {"name": "c", "template_file": "prompts/a.txt", "template": "x"},
            {"name": "d"},
            {"name": "e", "template_file": "prompts/empty.txt"},
        ]});
        let issues = resolve(&manifest, &mut doc);
        assert_eq!(doc["prompt_templates"][0]["template"], "Hello {name}\n");
        assert!(doc["prompt_templates"][0].get("template_file").is_none());
        let at: Vec<&str> = issues.iter().map(|i| i.pointer.as_str()).collect();
        assert_eq!(
            at,
            [
                "/prompt_templates/1/template_file",
                "/prompt_templates/2/template_file",
                "/prompt_templates/3",
                "/prompt_templates/4/template_file",
            ]
        );
        assert!(
            issues[0].message.contains("prompts/missing.txt"),
            "{issues:?}"
        );
        assert!(issues[3].message.contains("is empty"), "{issues:?}");
    }
}

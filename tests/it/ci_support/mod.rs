//! Reading the CI recipes of `examples/ci` the way the runner would, for
//! `tests/ci_recipes.rs`: a workflow's steps, their `env:` (workflow, job, step; secrets
//! replaced by test values), and the `evalctl` command lines of their `run:` blocks,
//! split into words as the shell would, under the convention the recipes state at their
//! top. Pure parsing: running the lines is the test's business.

use std::collections::BTreeMap;

use evalctl::manifest::yaml::{Limits, parse};
use serde_json::Value;

/// One `evalctl` command line of a recipe, ready to run.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// `plan.yml: step "Plan"`, for messages.
    pub origin: String,
    /// The line as written.
    pub line: String,
    /// The words after expansion, `evalctl` first.
    pub args: Vec<String>,
    /// The file the recipe redirects standard output to.
    pub stdout: Option<String>,
    /// The step's environment (workflow, job and step `env:`), resolved.
    pub env: BTreeMap<String, String>,
}

impl Invocation {
    /// The subcommand, e.g. `plan`.
    pub fn command(&self) -> &str {
        self.args.get(1).map_or("", String::as_str)
    }
}

/// The values `${{ secrets.NAME }}` takes in the tests; an unknown secret is empty, as
/// on GitHub.
pub struct Secrets {
    values: BTreeMap<String, String>,
}

impl Secrets {
    /// Secrets with these values.
    pub fn new<'a>(values: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let values = values
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Secrets { values }
    }

    fn get(&self, name: &str) -> String {
        self.values.get(name).cloned().unwrap_or_default()
    }

    /// An `env:` value: literal, or exactly `${{ secrets.NAME }}`; anything else
    /// (expressions of the run's context) is not known to the test.
    fn resolve(&self, value: &Value) -> Option<String> {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Bool(_) | Value::Number(_) => value.to_string(),
            _ => return None,
        };
        if !text.contains("${{") {
            return Some(text);
        }
        let inner = text.trim().strip_prefix("${{")?.strip_suffix("}}")?.trim();
        let name = inner.strip_prefix("secrets.")?;
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
            .then(|| self.get(name))
    }
}

/// A workflow's YAML, parsed with evalctl's own YAML loader.
fn workflow(name: &str, text: &str) -> Value {
    let documents = parse(text, &Limits::default())
        .unwrap_or_else(|e| panic!("{name} is not valid YAML: {e:?}"));
    assert_eq!(documents.len(), 1, "{name}: one document");
    documents
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or_default()
}

fn env_of(node: &Value, secrets: &Secrets, into: &mut BTreeMap<String, Option<String>>) {
    if let Some(Value::Object(env)) = node.get("env") {
        for (name, value) in env {
            into.insert(name.clone(), secrets.resolve(value));
        }
    }
}

/// Every evalctl line of a workflow, or what breaks the convention.
pub fn invocations(name: &str, text: &str, secrets: &Secrets) -> Result<Vec<Invocation>, String> {
    let workflow = workflow(name, text);
    let mut base = BTreeMap::new();
    env_of(&workflow, secrets, &mut base);
    let jobs = workflow
        .get("jobs")
        .and_then(Value::as_object)
        .ok_or(format!("{name}: no jobs"))?;
    let mut found = Vec::new();
    for (job_name, job) in jobs {
        let mut job_env = base.clone();
        env_of(job, secrets, &mut job_env);
        let steps = job.get("steps").and_then(Value::as_array);
        for step in steps.map(Vec::as_slice).unwrap_or_default() {
            let Some(script) = step.get("run").and_then(Value::as_str) else {
                continue;
            };
            let mut env = job_env.clone();
            env_of(step, secrets, &mut env);
            let label = step
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("job {job_name}"), |s| format!("step {s:?}"));
            let origin = format!("{name}: {label}");
            for line in logical_lines(script) {
                let trimmed = line.trim();
                if trimmed.starts_with('#') {
                    continue;
                }
                if !trimmed.starts_with("evalctl ") && trimmed != "evalctl" {
                    if let Some(hidden) = hidden_evalctl(trimmed) {
                        return Err(format!(
                            "{origin}: `{trimmed}` runs evalctl after `{hidden}`; \
                             put the evalctl command at the start of its own line"
                        ));
                    }
                    continue;
                }
                let (args, stdout) = shell_words(trimmed, &env)
                    .map_err(|e| format!("{origin}: `{trimmed}`: {e}"))?;
                let env = env
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
                    .collect();
                found.push(Invocation {
                    origin: origin.clone(),
                    line: trimmed.to_owned(),
                    args,
                    stdout,
                    env,
                });
            }
        }
    }
    Ok(found)
}

/// Lines of a script, with `\`-continued lines joined.
fn logical_lines(script: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                lines.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// The shell syntax an `evalctl` command hides behind on a line that does not start
/// with it (`x && evalctl …`, `if evalctl …`, `$(evalctl …)`), if any.
fn hidden_evalctl(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let openers = [
        "&&", "||", ";", "|", "!", "then", "do", "else", "if", "while", "until", "time", "exec",
    ];
    for pair in words.windows(2) {
        let (before, word) = (pair[0], pair[1]);
        let starts =
            word == "evalctl" || word.starts_with("$(evalctl") || word.starts_with("`evalctl");
        if word.starts_with("$(evalctl") || word.starts_with("`evalctl") {
            return Some("a command substitution".to_owned());
        }
        if starts && (openers.contains(&before) || before.ends_with(';')) {
            return Some(before.to_owned());
        }
    }
    None
}

/// Splits an evalctl line into words as the shell would, expanding `$NAME` and
/// `${NAME}` from `env`; returns the words and the file standard output is redirected
/// to. Only `> FILE` and `|| status=$?` may follow the command.
fn shell_words(
    line: &str,
    env: &BTreeMap<String, Option<String>>,
) -> Result<(Vec<String>, Option<String>), String> {
    if line.contains("${{") {
        return Err("a `${{ }}` expression on an evalctl line; pass it through `env:`".into());
    }
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let mut rest = String::new();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                words.extend(word.take());
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => {
                                word.get_or_insert_with(String::new).push(c)
                            }
                            Some(c) => {
                                let w = word.get_or_insert_with(String::new);
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some('$') => {
                            let value = expand(&mut chars, env)?;
                            word.get_or_insert_with(String::new).push_str(&value);
                        }
                        Some('`') => return Err("command substitution".into()),
                        Some(c) => word.get_or_insert_with(String::new).push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                if let Some(c) = chars.next() {
                    word.get_or_insert_with(String::new).push(c);
                }
            }
            '$' => {
                let value = expand(&mut chars, env)?;
                // Unquoted: split on whitespace like the shell.
                let mut parts = value.split_whitespace();
                if let Some(first) = parts.next() {
                    word.get_or_insert_with(String::new).push_str(first);
                }
                for part in parts {
                    words.extend(word.take());
                    word = Some(part.to_owned());
                }
            }
            '`' => return Err("command substitution".into()),
            '>' | '|' | '&' | ';' | '<' => {
                words.extend(word.take());
                rest.push(c);
                rest.extend(chars.by_ref());
                break;
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    let stdout = plumbing(&rest)?;
    Ok((words, stdout))
}

/// The plumbing after an evalctl command: `[> FILE] [|| status=$?]`; the file.
fn plumbing(rest: &str) -> Result<Option<String>, String> {
    let mut rest = rest.trim();
    let mut stdout = None;
    if let Some(after) = rest.strip_prefix('>') {
        let after = after.trim_start();
        let end = after.find(char::is_whitespace).unwrap_or(after.len());
        let file = &after[..end];
        if file.is_empty() || file.contains(['$', '"', '\'', '&', '|', ';', '>']) {
            return Err(format!("redirect to `{file}`: write a plain file name"));
        }
        stdout = Some(file.to_owned());
        rest = after[end..].trim();
    }
    match rest {
        "" | "|| status=$?" => Ok(stdout),
        other => Err(format!(
            "unsupported shell plumbing `{other}` (only `> FILE` and `|| status=$?` may follow)"
        )),
    }
}

fn expand(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    env: &BTreeMap<String, Option<String>>,
) -> Result<String, String> {
    let braced = chars.peek() == Some(&'{');
    if braced {
        chars.next();
    }
    let mut name = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
            chars.next();
        } else {
            break;
        }
    }
    if braced && chars.next() != Some('}') {
        return Err(format!("`${{{name}…`: only plain `${{NAME}}` is supported"));
    }
    if name.is_empty() {
        return Err("a `$` that is not a variable (command substitution?)".into());
    }
    match env.get(&name) {
        Some(Some(value)) => Ok(value.clone()),
        Some(None) => Err(format!(
            "`${name}` comes from an expression the test cannot evaluate; use a literal \
             or `${{{{ secrets.NAME }}}}` in `env:`"
        )),
        None => Err(format!(
            "`${name}` is not defined in the `env:` of the workflow, job or step"
        )),
    }
}

/// The files a recipe's later steps read: `readFileSync('…')` in scripts and the
/// `path:` of an uploaded artifact (not the `path:` a checkout writes to).
pub fn files_read(text: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut uses = "";
    for line in text.lines() {
        let line = line.trim();
        if let Some(action) = line.trim_start_matches("- ").strip_prefix("uses:") {
            uses = action.trim();
        }
        if let Some(path) = line.strip_prefix("path:")
            && !uses.starts_with("actions/checkout")
        {
            files.push(path.trim().to_owned());
        }
        let mut rest = line;
        while let Some(at) = rest.find("readFileSync('") {
            let after = &rest[at + "readFileSync('".len()..];
            let end = after.find('\'').unwrap_or(after.len());
            files.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    files
}

/// A `run:` step of a recipe, as the runner would run it.
#[derive(Debug, Clone)]
pub struct Step {
    /// Its `name:`.
    pub name: String,
    /// The `run:` script.
    pub script: String,
    /// Workflow, job and step `env:`, secrets resolved; `None` for a value of
    /// the run's context (`${{ steps.x.outputs.y }}`), which the test sets.
    pub env: BTreeMap<String, Option<String>>,
}

/// Every `run:` step of a workflow, in order.
pub fn steps(name: &str, text: &str, secrets: &Secrets) -> Vec<Step> {
    let workflow = workflow(name, text);
    let mut base = BTreeMap::new();
    env_of(&workflow, secrets, &mut base);
    let mut out = Vec::new();
    let jobs = workflow.get("jobs").and_then(Value::as_object);
    for job in jobs.into_iter().flat_map(|j| j.values()) {
        let mut job_env = base.clone();
        env_of(job, secrets, &mut job_env);
        let steps = job.get("steps").and_then(Value::as_array);
        for step in steps.map(Vec::as_slice).unwrap_or_default() {
            let Some(script) = step.get("run").and_then(Value::as_str) else {
                continue;
            };
            let mut env = job_env.clone();
            env_of(step, secrets, &mut env);
            out.push(Step {
                name: step
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                script: script.to_owned(),
                env,
            });
        }
    }
    out
}

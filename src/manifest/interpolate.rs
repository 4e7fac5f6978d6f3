//! Environment interpolation, and the rule that secrets are environment references.
//!
//! [`interpolate`] walks one document's JSON value:
//! - In a string of a non-secret field, every `${NAME}` is replaced by the variable's
//!   value ([`expand`]); `$${` stands for a literal `${`. An undefined variable, or a
//!   `${` that does not start a well-formed reference, is an error at the reference
//!   itself. Values are always strings (`sample_rate: ${RATE}` is the string `"0.5"`,
//!   which the schema then refuses), so a variable cannot change a document's structure.
//! - A secret field (see [`is_secret_key`]) is not interpolated: its value must be exactly
//!   one `${NAME}` reference, which stays in the manifest set as an
//!   [`EnvRef`] and is read at apply time. A literal is refused
//!   without ever being repeated (the value is replaced by a placeholder so no later
//!   stage can echo it, and [`SecretSite`]s tell the renderer what to mask in the
//!   source). An undefined secret variable is only a warning: a plan never needs it.
//! - In an Integration document, every value taken from the environment is a secret
//!   too. The document's value is interpolated (the schema checks what will be sent),
//!   but each string that refers to a variable is recorded in [`Outcome::kept`] with
//!   its text as written and only a fingerprint of its value: the spec keeps the
//!   text, `apply` expands it at the last moment, and plans compare fingerprints. An
//!   undefined variable there is a warning (the value cannot be compared until it is
//!   set). A string under a key that names a credential
//!   ([`crate::api::secret::is_secret_key`], the rule the logs redact by: `api_key`,
//!   `token`, `secret`, `password`, `authorization`, `credentials`, ...) must refer to
//!   a variable (`Bearer ${TOKEN}` does); a literal is refused like a literal secret.
//!   The fields that name the document (`provider`, `name`, ...) are interpolated and
//!   shown as in a Project document.
//! - Outside Integration documents, a Protect stage's webhook URL that refers to a
//!   variable is kept the same way ([`SECRET_WHEN_FROM_ENV`]).
//!
//! Mapping keys are never interpolated.

pub(super) mod tokens;

use serde_json::Value;

use super::types::{EnvField, EnvRef};
use crate::api::SECRET_FIELDS;
use tokens::Tokens;

/// The value a refused literal secret is replaced with, so later stages see a valid
/// reference and the literal goes no further.
pub const REDACTED_REF: &str = "${REDACTED}";

/// Whether a mapping key names a secret field of an Integration document (`token`,
/// `api_key_value`, `headers`, `service_account_credentials`). Under such a key a
/// string is the secret; a mapping's values are secrets each (AWS `token`, `headers`).
#[must_use]
pub fn is_secret_key(key: &str) -> bool {
    SECRET_FIELDS.contains(&key)
}

/// Severity of an [`Issue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The document cannot be used.
    Error,
    /// The document can be used; something is probably missing.
    Warning,
}

/// Something interpolation found, at a place in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Error or warning.
    pub level: Level,
    /// JSON pointer of the string value.
    pub pointer: String,
    /// The reference, when the issue is about one reference of the string (to point at
    /// it in the source when it is written there).
    pub reference: Option<Reference>,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub help: Option<String>,
    /// For a write-only secret whose variable is not set: the variable (only `apply`
    /// needs it, so `plan` and `drift` report these once, together).
    pub unset_secret: Option<String>,
}

/// One reference of a string value, as [`Issue`] points at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// Its byte range in the string's decoded text.
    pub range: (usize, usize),
    /// Its text (e.g. `${NAME}`).
    pub text: String,
    /// How many times the same text comes before it in the string: the source is searched
    /// for the text, as the decoded string and the source spell references alike.
    pub nth: usize,
}

impl Reference {
    /// The reference at `range` of `decoded` (`None` when the range is not in it);
    /// `tokens` are `decoded`'s, which count the same text before it in one pass over
    /// the string for all its references. An unterminated `${` (not a token, and at
    /// most one a string) is counted by searching.
    fn new(decoded: &str, tokens: &Tokens<'_>, range: (usize, usize)) -> Option<Reference> {
        let text = decoded.get(range.0..range.1)?;
        let nth = match tokens.rank_at(range.0) {
            Some(rank) if text.ends_with('}') => rank,
            _ => decoded[..range.0].matches(text).count(),
        };
        Some(Reference {
            range,
            text: text.to_owned(),
            nth,
        })
    }
}

/// A scalar under a secret key, found while interpolating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretSite {
    /// JSON pointer of the scalar.
    pub pointer: String,
    /// Whether it is a well-formed `${NAME}` reference (nothing to hide).
    pub is_reference: bool,
}

/// What [`interpolate`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Errors and warnings, in document order.
    pub issues: Vec<Issue>,
    /// Every scalar under a secret key, and every refused literal credential.
    pub secrets: Vec<SecretSite>,
    /// In an Integration document (and at [`SECRET_WHEN_FROM_ENV`]), the strings to keep as written (see
    /// [`crate::manifest::types::IntegrationSpec::config`]), in document order.
    pub kept: Vec<Kept>,
    /// Every variable referred to, in document order.
    pub variables: Vec<Variable>,
}

/// A variable a string of the document refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// JSON pointer of the string.
    pub pointer: String,
    /// The reference in the string.
    pub reference: Option<Reference>,
    /// Whether its value is never shown: a secret field's, or any other of an
    /// Integration document's but the fields that name it (`kind`, `provider`, `name`, ...).
    pub hidden: bool,
}

/// A string of an Integration document kept as written in the spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// JSON pointer of the string.
    pub pointer: String,
    /// The string as written (with its `${NAME}` references; not a secret).
    pub raw: String,
    /// What the plan may know of its value.
    pub field: EnvField,
}

/// The environment variable a secret of a `provider` integration is conventionally
/// read from, by the secret's path in the document: `OPENAI_API_KEY` for an openai
/// `token`, `AWS_ACCESS_KEY_ID` for that key of a `token` mapping, `CUSTOM_TOKEN`,
/// `<PROVIDER>_HEADER_<NAME>`, `<PROVIDER>_CREDENTIALS`; for a value of another
/// field `<PROVIDER>_<PATH>` (`AZURE_DEFAULT_HEADERS_AUTHORIZATION`,
/// `CUSTOM_INIT_KWARGS_API_KEY`), else `<PROVIDER>_SECRET`.
#[must_use]
pub fn secret_variable(provider: &str, path: &[&str]) -> String {
    let upper = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    let provider = provider.to_ascii_uppercase();
    let name = match path {
        ["token"] if provider == "CUSTOM" => format!("{provider}_TOKEN"),
        ["token"] | ["api_key_value"] => format!("{provider}_API_KEY"),
        ["token", key] => upper(key),
        ["headers", header] => format!("{provider}_HEADER_{}", upper(header)),
        [.., "service_account_credentials"] => format!("{provider}_CREDENTIALS"),
        [first, ..] if !SECRET_FIELDS.contains(first) => {
            // A value of another field (a header map, init kwargs, a credential
            // key): the provider and the path, e.g. `AZURE_DEFAULT_HEADERS_X_KEY`.
            let parts: Vec<String> = path
                .iter()
                .filter(|p| **p != "custom_llm_config")
                .map(|p| upper(p))
                .collect();
            format!("{provider}_{}", parts.join("_"))
        }
        _ => format!("{provider}_SECRET"),
    };
    // A name starts with a letter or `_` (`token: [a, b]` would make it `0`).
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("{provider}_{name}")
    } else {
        name
    }
}

/// Interpolates `value` (one document) in place. `secret_fields` says whether the
/// document has secret fields at all (Integration documents do).
pub fn interpolate(
    value: &mut Value,
    secret_fields: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Outcome {
    let provider = value
        .get("provider")
        .and_then(Value::as_str)
        .filter(|p| p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or("provider")
        .to_owned();
    let mut walker = Walker {
        env,
        secret_fields,
        provider,
        out: Outcome::default(),
    };
    walker.walk(value, &mut String::new(), false, false);
    walker.out
}

/// Fields of other documents than Integrations whose value, when taken from
/// the environment, is a secret all the same: kept as written in the spec
/// ([`Outcome::kept`], the value only as a fingerprint), shown as written,
/// and expanded by `apply` at the last moment. A Protect stage's webhook URL
/// is one: a Slack or Teams webhook URL is its own credential. `*` matches
/// any list index.
const SECRET_WHEN_FROM_ENV: &[&[&str]] = &[&[
    "protect_stages",
    "*",
    "prioritized_rulesets",
    "*",
    "action",
    "subscriptions",
    "*",
    "url",
]];

/// Whether the string `text` at the JSON pointer `path` is one of
/// [`SECRET_WHEN_FROM_ENV`] and refers to the environment (or writes `$${`):
/// the loader keeps it as written, and export writes it as it has it.
pub fn kept_as_written(path: &str, text: &str) -> bool {
    if !text.contains("${") {
        return false;
    }
    let tokens: Vec<&str> = path.split('/').skip(1).collect();
    SECRET_WHEN_FROM_ENV.iter().any(|pattern| {
        pattern.len() == tokens.len()
            && pattern.iter().zip(&tokens).all(|(p, t)| {
                if *p == "*" {
                    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
                } else {
                    p == t
                }
            })
    })
}

/// Finds the scalars under secret keys of `value` (any key [`crate::api::secret::is_secret_key`]
/// names), without changing anything: for documents that are not interpolated (an unknown
/// kind), and for Project documents, which have no secret fields but may hold one by
/// mistake, so their literals are masked.
#[must_use]
pub fn secret_sites(value: &Value) -> Vec<SecretSite> {
    let mut out = Vec::new();
    find_secrets(value, &mut String::new(), false, &mut out);
    out
}

fn find_secrets(value: &Value, path: &mut String, secret: bool, out: &mut Vec<SecretSite>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let len = path.len();
                push_key(path, key);
                // Any key that names a secret (the broader rule of the client's logs), as
                // this masks what is not interpolated, or not expected to hold one.
                let secret = secret || crate::api::secret::is_secret_key(key);
                find_secrets(child, path, secret, out);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&index.to_string());
                find_secrets(child, path, secret, out);
                path.truncate(len);
            }
        }
        // Under a secret key, even what reads as null is masked (`!!null sk-...` is null).
        Value::Null if !secret => {}
        scalar if secret => out.push(SecretSite {
            pointer: path.clone(),
            is_reference: scalar
                .as_str()
                .is_some_and(|s| EnvRef::try_from(s.to_owned()).is_ok()),
        }),
        _ => {}
    }
}

fn push_key(path: &mut String, key: &str) {
    path.push('/');
    path.push_str(&super::yaml::escape_token(key));
}

/// What [`expand`] found wrong with one reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// `${` without a closing `}` (the range runs to the end of the text).
    Unterminated {
        /// Byte range in the text.
        range: (usize, usize),
    },
    /// `${...}` whose name is not a variable name.
    InvalidName {
        /// Byte range in the text.
        range: (usize, usize),
    },
    /// A well-formed reference to a variable that is not set.
    Unset {
        /// The variable.
        name: String,
        /// Byte range in the text.
        range: (usize, usize),
    },
}

/// A string with its references expanded ([`expand`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Expansion {
    /// The text, every `${NAME}` replaced by its value and `$${` by `${`; a
    /// reference with a problem is left as written.
    pub text: String,
    /// The variables the text refers to, in order (repeats included), each with its
    /// byte range in the text.
    pub references: Vec<(String, (usize, usize))>,
    /// What is wrong, in order.
    pub problems: Vec<Problem>,
}

/// Never shows the expanded text: it may hold a secret.
impl std::fmt::Debug for Expansion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expansion")
            .field("references", &self.references)
            .field("problems", &self.problems)
            .finish_non_exhaustive()
    }
}

/// Expands the references of one string through `env`: the one reading of
/// `${NAME}` and `$${`, used by the loader and, for the strings of an
/// Integration document kept as written, by `apply`.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Expansion {
    let mut out = Expansion {
        text: String::with_capacity(text.len()),
        references: Vec::new(),
        problems: Vec::new(),
    };
    let mut rest = text;
    let mut at = 0;
    while let Some(i) = rest.find('$') {
        out.text.push_str(&rest[..i]);
        let tail = &rest[i..];
        let start = at + i;
        if let Some(after) = tail.strip_prefix("$${") {
            out.text.push_str("${");
            let used = tail.len() - after.len();
            rest = after;
            at += i + used;
            continue;
        }
        let Some(body) = tail.strip_prefix("${") else {
            out.text.push('$');
            rest = &tail[1..];
            at += i + 1;
            continue;
        };
        let Some(close) = body.find('}') else {
            out.problems.push(Problem::Unterminated {
                range: (start, text.len()),
            });
            out.text.push_str(tail);
            rest = "";
            break;
        };
        let name = &body[..close];
        let end = start + 2 + close + 1;
        if EnvRef::new(name).is_err() {
            out.problems.push(Problem::InvalidName {
                range: (start, end),
            });
            out.text.push_str(&text[start..end]);
        } else {
            out.references.push((name.to_owned(), (start, end)));
            match env(name) {
                Some(value) => out.text.push_str(&value),
                None => {
                    out.problems.push(Problem::Unset {
                        name: name.to_owned(),
                        range: (start, end),
                    });
                    out.text.push_str(&text[start..end]);
                }
            }
        }
        rest = &body[close + 1..];
        at = end;
    }
    out.text.push_str(rest);
    out
}

struct Walker<'e> {
    env: &'e dyn Fn(&str) -> Option<String>,
    secret_fields: bool,
    /// The document's provider, for suggested variable names.
    provider: String,
    out: Outcome,
}

impl Walker<'_> {
    fn walk(&mut self, value: &mut Value, path: &mut String, secret: bool, credential: bool) {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    let len = path.len();
                    push_key(path, key);
                    let secret = secret || (self.secret_fields && is_secret_key(key));
                    let credential = credential || crate::api::secret::is_secret_key(key);
                    self.walk(child, path, secret, credential);
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&index.to_string());
                    self.walk(child, path, secret, credential);
                    path.truncate(len);
                }
            }
            // Under a secret key, even what reads as null is masked (`!!null sk-...` is null).
            Value::Null if !secret => {}
            scalar if secret => self.secret(scalar, path),
            Value::String(text) => {
                if let Some(replaced) = self.string(text, path, credential) {
                    *text = replaced;
                }
            }
            _ => {}
        }
    }

    /// A scalar under a secret key.
    fn secret(&mut self, value: &mut Value, path: &str) {
        let reference = value
            .as_str()
            .and_then(|s| EnvRef::try_from(s.to_owned()).ok());
        self.out.secrets.push(SecretSite {
            pointer: path.to_owned(),
            is_reference: reference.is_some(),
        });
        if let Some(reference) = &reference {
            self.out.variables.push(Variable {
                name: reference.name().to_owned(),
                pointer: path.to_owned(),
                reference: None,
                hidden: true,
            });
        }
        match reference {
            Some(reference) if (self.env)(reference.name()).is_none() => {
                self.out.issues.push(Issue {
                    unset_secret: Some(reference.name().to_owned()),
                    level: Level::Warning,
                    pointer: path.to_owned(),
                    reference: None,
                    message: format!(
                        "environment variable `{}` is not set; `apply` will need it",
                        reference.name()
                    ),
                    help: Some(format!(
                        "set `{}` in the environment before running `evalctl apply` (`plan` does not read secrets)",
                        reference.name()
                    )),
                });
            }
            Some(reference) if (self.env)(reference.name()).is_some_and(|v| v.is_empty()) => {
                self.out.issues.push(Issue {
                    unset_secret: None,
                    level: Level::Warning,
                    pointer: path.to_owned(),
                    reference: None,
                    message: format!(
                        "environment variable `{}` is empty; `apply` will refuse it",
                        reference.name()
                    ),
                    help: Some(format!(
                        "give `{}` the secret's value before running `evalctl apply`",
                        reference.name()
                    )),
                });
            }
            Some(_) => {}
            None if value.is_string() => {
                self.out.issues.push(Issue {
                    unset_secret: None,
                    level: Level::Error,
                    pointer: path.to_owned(),
                    reference: None,
                    message: "a secret must be an environment reference, not a literal value"
                        .to_owned(),
                    help: Some(format!(
                        "write `${{{}}}` and set the variable in the environment; never commit secrets",
                        self.suggested_name(path)
                    )),
                });
                *value = Value::String(REDACTED_REF.to_owned());
            }
            // A number or a boolean: the schema reports the wrong type; the source
            // line is masked all the same.
            None => {}
        }
    }

    /// A variable name for the secret at the JSON pointer `path` ([`secret_variable`]).
    fn suggested_name(&self, path: &str) -> String {
        let tokens: Vec<String> = path
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
        secret_variable(&self.provider, &tokens)
    }

    /// The interpolated text of a non-secret string, or `None` when it has nothing to
    /// replace (or has errors, which are recorded). In an Integration document, a
    /// string that refers to a variable, or writes `$${`, is recorded in
    /// [`Outcome::kept`] (its expanded value only as a fingerprint), an unset
    /// variable is a warning (`apply` needs it, `plan` can do without), and a
    /// string under a credential key ([`crate::api::secret::is_secret_key`]) must
    /// refer to a variable.
    fn string(&mut self, text: &str, path: &str, credential: bool) -> Option<String> {
        let kept = (self.secret_fields && !self.is_identity(path)) || kept_as_written(path, text);
        if kept && credential && !text.contains("${") {
            self.out.secrets.push(SecretSite {
                pointer: path.to_owned(),
                is_reference: false,
            });
            self.out.issues.push(Issue {
                unset_secret: None,
                level: Level::Error,
                pointer: path.to_owned(),
                reference: None,
                message: "a credential must come from the environment, not be written in the file"
                    .to_owned(),
                help: Some(format!(
                    "write `${{{}}}` (or e.g. `Bearer ${{{}}}`) and set the variable in the environment; never commit secrets",
                    self.suggested_name(path),
                    self.suggested_name(path)
                )),
            });
            return Some(REDACTED_REF.to_owned());
        }
        if !text.contains('$') {
            return None;
        }
        let expansion = expand(text, self.env);
        let tokens = Tokens::new(text);
        for (name, range) in &expansion.references {
            self.out.variables.push(Variable {
                name: name.clone(),
                pointer: path.to_owned(),
                reference: Reference::new(text, &tokens, *range),
                hidden: kept,
            });
        }
        let mut failed = false;
        let mut unset = false;
        for problem in &expansion.problems {
            let (range, message, help) = match problem {
                Problem::Unterminated { range } => (
                    *range,
                    "unterminated environment reference: `${` without a closing `}`".to_owned(),
                    "write `${NAME}`, or `$${` for a literal `${`".to_owned(),
                ),
                Problem::InvalidName { range } => (
                    *range,
                    format!("`{}` is not a valid environment reference", &text[range.0..range.1]),
                    "a variable name is letters, digits and `_`, not starting with a digit; write `$${` for a literal `${`".to_owned(),
                ),
                Problem::Unset { name, range } if kept => {
                    unset = true;
                    self.out.issues.push(Issue {
                        unset_secret: None,
                        level: Level::Warning,
                        pointer: path.to_owned(),
                        reference: Reference::new(text, &tokens, *range),
                        message: format!(
                            "environment variable `{name}` is not set; `apply` will need it"
                        ),
                        help: Some(format!(
                            "set `{name}` in the environment; until then `plan` cannot compare this value"
                        )),
                    });
                    continue;
                }
                Problem::Unset { name, range } => (
                    *range,
                    format!("environment variable `{name}` is not set"),
                    format!(
                        "set `{name}` in the environment, or write `$${{{name}}}` for a literal `${{{name}}}`"
                    ),
                ),
            };
            self.error(path, Reference::new(text, &tokens, range), &message, &help);
            failed = true;
        }
        if kept && !failed {
            let field = if expansion.references.is_empty() {
                EnvField::Escaped {
                    text: expansion.text.clone(),
                }
            } else {
                EnvField::FromEnv {
                    fingerprint: (!unset).then(|| {
                        crate::api::fingerprint::fingerprint(Some(&Value::String(
                            expansion.text.clone(),
                        )))
                    }),
                }
            };
            if expansion.text != text || !expansion.references.is_empty() {
                self.out.kept.push(Kept {
                    pointer: path.to_owned(),
                    raw: text.to_owned(),
                    field,
                });
            }
        }
        (!failed && !unset && expansion.text != text).then_some(expansion.text)
    }

    /// Whether `path` is a field of an Integration document that names it rather
    /// than configures it (`kind`, `provider`, `name`, `rotate_secrets`, and
    /// `api_version` outside Azure): interpolated and shown as in a Project.
    fn is_identity(&self, path: &str) -> bool {
        match path {
            "/kind" | "/provider" | "/name" | "/rotate_secrets" => true,
            "/api_version" => self.provider != "azure",
            _ => false,
        }
    }

    fn error(&mut self, path: &str, reference: Option<Reference>, message: &str, help: &str) {
        self.out.issues.push(Issue {
            unset_secret: None,
            level: Level::Error,
            pointer: path.to_owned(),
            reference,
            message: message.to_owned(),
            help: Some(help.to_owned()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        match name {
            "TEAM" => Some("team-a".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    /// A secret's variable that is set but empty is a warning now, as `apply` refuses it.
    #[test]
    fn an_empty_secret_variable_is_a_warning() {
        let mut doc = json!({"provider": "openai", "token": "${EMPTY}"});
        let out = interpolate(&mut doc, true, &env);
        let found: Vec<_> = out
            .issues
            .iter()
            .map(|i| (i.level, i.pointer.as_str(), i.message.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![(
                Level::Warning,
                "/token",
                "environment variable `EMPTY` is empty; `apply` will refuse it"
            )]
        );
        assert_eq!(doc["token"], "${EMPTY}");
    }

    #[test]
    fn suggested_variables_are_valid_names() {
        assert_eq!(secret_variable("openai", &["token"]), "OPENAI_API_KEY");
        assert_eq!(
            secret_variable("aws_bedrock", &["token", "aws_access_key_id"]),
            "AWS_ACCESS_KEY_ID"
        );
        assert_eq!(
            secret_variable("custom", &["headers", "X-A"]),
            "CUSTOM_HEADER_X_A"
        );
        // A list where a string belongs: the index would start the name.
        assert_eq!(secret_variable("openai", &["token", "0"]), "OPENAI_0");
        for name in [
            secret_variable("openai", &["token", "0"]),
            secret_variable("x", &["1", "a"]),
        ] {
            assert!(EnvRef::try_from(format!("${{{name}}}")).is_ok(), "{name}");
        }
    }

    #[test]
    fn replaces_references_and_unescapes() {
        let mut doc = json!({"name": "${TEAM}-bot", "d": "cost $5, $${TEAM} stays, ${EMPTY}."});
        let out = interpolate(&mut doc, false, &env);
        assert_eq!(out.issues, vec![]);
        assert_eq!(doc["name"], "team-a-bot");
        assert_eq!(doc["d"], "cost $5, ${TEAM} stays, .");
    }

    #[test]
    fn reports_undefined_and_malformed_references_at_their_place() {
        let mut doc = json!({"a": ["x ${MISSING} y"], "b": "${1X}", "c": "${OPEN"});
        let out = interpolate(&mut doc, false, &env);
        let found: Vec<_> = out
            .issues
            .iter()
            .map(|i| {
                (
                    i.pointer.as_str(),
                    i.reference.as_ref().map(|r| r.range),
                    i.message.as_str(),
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    "/a/0",
                    Some((2, 12)),
                    "environment variable `MISSING` is not set"
                ),
                (
                    "/b",
                    Some((0, 5)),
                    "`${1X}` is not a valid environment reference"
                ),
                (
                    "/c",
                    Some((0, 6)),
                    "unterminated environment reference: `${` without a closing `}`"
                ),
            ]
        );
        assert_eq!(doc["a"][0], "x ${MISSING} y", "left as written");
    }

    #[test]
    fn integration_values_from_the_environment_are_kept_as_written() {
        let env = |name: &str| match name {
            "HDR" => Some("CANARY-hdr".to_owned()),
            "TEAM" => Some("team-a".to_owned()),
            _ => None,
        };
        let mut doc = json!({
            "provider": "azure",
            "name": "${TEAM}",
            "endpoint": "https://${TEAM}.example.com",
            "default_headers": {"X-Key": "${HDR}", "Authorization": "Bearer ${HDR}", "X-Lit": "$${x}"},
            "custom_header_mapping": {"user": "${UNSET}"},
        });
        let out = interpolate(&mut doc, true, &env);
        let levels: Vec<_> = out
            .issues
            .iter()
            .map(|i| (i.pointer.as_str(), i.level))
            .collect();
        assert_eq!(
            levels,
            [("/custom_header_mapping/user", Level::Warning)],
            "an unset variable in an integration is a warning"
        );
        assert_eq!(doc["name"], "team-a", "names are interpolated");
        assert_eq!(
            doc["default_headers"]["X-Key"], "CANARY-hdr",
            "validated expanded"
        );
        let mut kept: Vec<_> = out
            .kept
            .iter()
            .map(|k| (k.pointer.as_str(), k.raw.as_str(), k.field.clone()))
            .collect();
        kept.sort_by(|a, b| a.0.cmp(b.0));
        let fp = |v: &str| {
            Some(crate::api::fingerprint::fingerprint(Some(&Value::String(
                v.to_owned(),
            ))))
        };
        assert_eq!(
            kept,
            [
                (
                    "/custom_header_mapping/user",
                    "${UNSET}",
                    EnvField::FromEnv { fingerprint: None }
                ),
                (
                    "/default_headers/Authorization",
                    "Bearer ${HDR}",
                    EnvField::FromEnv {
                        fingerprint: fp("Bearer CANARY-hdr")
                    }
                ),
                (
                    "/default_headers/X-Key",
                    "${HDR}",
                    EnvField::FromEnv {
                        fingerprint: fp("CANARY-hdr")
                    }
                ),
                (
                    "/default_headers/X-Lit",
                    "$${x}",
                    EnvField::Escaped {
                        text: "${x}".into()
                    }
                ),
                (
                    "/endpoint",
                    "https://${TEAM}.example.com",
                    EnvField::FromEnv {
                        fingerprint: fp("https://team-a.example.com")
                    }
                ),
            ]
        );
        assert!(!format!("{out:?}").contains("CANARY"));
    }

    #[test]
    fn a_credential_in_an_integration_must_come_from_the_environment() {
        let mut doc = json!({
            "provider": "custom",
            "custom_llm_config": {"init_kwargs": {"API_KEY": "CANARY-lit", "nested": {"password": "p ${PW}"}, "retries": 3}},
        });
        let out = interpolate(&mut doc, true, &|_| Some("v".to_owned()));
        let errors: Vec<_> = out
            .issues
            .iter()
            .map(|i| {
                (
                    i.pointer.as_str(),
                    i.level,
                    i.help.clone().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].0, "/custom_llm_config/init_kwargs/API_KEY");
        assert!(
            errors[0].2.contains("${CUSTOM_INIT_KWARGS_API_KEY}"),
            "{errors:?}"
        );
        assert_eq!(
            doc["custom_llm_config"]["init_kwargs"]["API_KEY"],
            REDACTED_REF
        );
        assert!(!format!("{out:?}").contains("CANARY"));
        // In a Project document nothing of this applies.
        let mut doc = json!({"name": "p", "x": {"api_key": "lit", "v": "${A}"}});
        let out = interpolate(&mut doc, false, &|_| Some("shown".to_owned()));
        assert!(out.issues.is_empty() && out.kept.is_empty());
        assert_eq!(doc["x"]["v"], "shown");
    }

    #[test]
    fn secrets_are_references_and_literals_never_travel() {
        let mut doc = json!({
            "token": "sk-live-123",
            "headers": {"X-Key": "${TEAM}", "X-Other": "${UNSET}"},
            "gcs_config": {"service_account_credentials": "{\"k\": 1}", "bucket_name": "${TEAM}"},
        });
        let out = interpolate(&mut doc, true, &env);
        assert_eq!(doc["token"], REDACTED_REF);
        assert_eq!(doc["headers"]["X-Key"], "${TEAM}", "not interpolated");
        assert_eq!(doc["gcs_config"]["bucket_name"], "team-a");
        let levels: Vec<_> = out
            .issues
            .iter()
            .map(|i| (i.pointer.as_str(), i.level))
            .collect();
        assert_eq!(
            levels,
            vec![
                ("/token", Level::Error),
                ("/headers/X-Other", Level::Warning),
                ("/gcs_config/service_account_credentials", Level::Error),
            ]
        );
        let text = format!("{out:?}");
        assert!(!text.contains("sk-live-123"), "{text}");
        assert_eq!(out.secrets.len(), 4);
        assert_eq!(
            secret_sites(&json!({"token": "x", "a": {"api_key_value": 5}})),
            vec![
                SecretSite {
                    pointer: "/token".into(),
                    is_reference: false
                },
                SecretSite {
                    pointer: "/a/api_key_value".into(),
                    is_reference: false
                },
            ]
        );
    }
}

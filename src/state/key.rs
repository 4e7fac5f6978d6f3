//! How manifests refer to objects, and objects that were not found.

use serde::{Deserialize, Serialize};

use crate::scrub::escape_controls;
use crate::suggest::did_you_mean;

/// How a manifest refers to an object: by name or by id.
///
/// Serialized as one string (so it can key JSON maps): the name itself, or
/// `id:<id>`; a name that itself starts with `id:` or `name:` is written
/// `name:<name>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum ObjectKey {
    /// By name.
    Name(String),
    /// By id.
    Id(String),
}

impl ObjectKey {
    /// The key of a spec that gives `name` or `id` (name wins when both are given;
    /// validation refuses that case before this is called).
    pub fn from_parts(name: Option<&str>, id: Option<&str>) -> Option<ObjectKey> {
        match (name, id) {
            (Some(n), _) => Some(ObjectKey::Name(n.to_owned())),
            (None, Some(i)) => Some(ObjectKey::Id(i.to_owned())),
            (None, None) => None,
        }
    }

    /// The name or the id, without the `id:` prefix.
    pub fn text(&self) -> &str {
        match self {
            ObjectKey::Name(s) | ObjectKey::Id(s) => s,
        }
    }
}

impl From<ObjectKey> for String {
    fn from(key: ObjectKey) -> String {
        match key {
            ObjectKey::Id(id) => format!("id:{id}"),
            ObjectKey::Name(n) if n.starts_with("id:") || n.starts_with("name:") => {
                format!("name:{n}")
            }
            ObjectKey::Name(n) => n,
        }
    }
}

impl From<String> for ObjectKey {
    fn from(s: String) -> ObjectKey {
        if let Some(id) = s.strip_prefix("id:") {
            ObjectKey::Id(id.to_owned())
        } else if let Some(name) = s.strip_prefix("name:") {
            ObjectKey::Name(name.to_owned())
        } else {
            ObjectKey::Name(s)
        }
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectKey::Name(n) => f.write_str(n),
            ObjectKey::Id(i) => write!(f, "id:{i}"),
        }
    }
}

/// An object that was looked for and that the service does not have.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MissingObject {
    /// `project`, `log stream` or `experiment`.
    pub kind: String,
    /// How it was referred to.
    pub key: ObjectKey,
    /// The project it was looked for in, for runs.
    pub project: Option<String>,
    /// The nearest existing names, best first.
    pub suggestions: Vec<String>,
}

/// Names (as written, and as the service holds them) with their control
/// characters escaped, as plans show them.
impl std::fmt::Display for MissingObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.key.to_string();
        write!(f, "{} `{}` not found", self.kind, escape_controls(&key))?;
        if let Some(p) = &self.project {
            write!(f, " in project `{}`", escape_controls(p))?;
        }
        let suggestions: Vec<String> = self
            .suggestions
            .iter()
            .map(|s| escape_controls(s).into_owned())
            .collect();
        f.write_str(&did_you_mean(&suggestions))
    }
}

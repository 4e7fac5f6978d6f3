//! The service's limits on what a manifest holds, derived from its reference
//! (`reference/service-openapi.json`, embedded as [`SERVICE_REFERENCE`]) and written
//! into the manifest schema, so `validate` and `plan` refuse offline, at `file:line:column`,
//! what `apply` would have the service refuse with a 422.
//!
//! Nothing here lists a limit. [`BINDINGS`] says which service schemas each part of a
//! manifest is sent as (or stored in): a section as `SectionCreateRequest` and
//! `SectionUpdateRequest`, a dashboard's `sections` as the dashboard's (at most 50), a
//! project's `id` as the `project_id` path parameter, and so on; an Integration
//! document's provider variant is bound, without a table, to the body of
//! `PUT /v2/integrations/<provider>`. [`apply`] then walks each bound manifest schema and
//! its service schemas side by side (same property names, array items, map values, the
//! branches of a union paired by their tag or by their JSON type, `$ref`s and nullable
//! `anyOf`s followed on both sides) and copies every limit the service declares onto the
//! manifest field it meets:
//! - strings: `minLength`, `maxLength`, `pattern`, `format` (`uri`; `uuid4` and the other
//!   UUID formats as `uuid`; `date-time`, `date`);
//! - numbers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`;
//! - arrays: `minItems`, `maxItems`, `uniqueItems`; objects: `minProperties`,
//!   `maxProperties`.
//!
//! Where the manifest type already has a limit, the stricter one is kept (a second,
//! different `pattern` is added under `allOf`). Fields whose types differ (the manifest's
//! `scorer_version` is a number, the service's a version object) are left alone. A limit
//! added to the reference is enforced on the next build, and a manifest field added to a
//! bound type (say `widgets` on the trends dashboard, at most 50) gets the service's
//! limits without a line here; a new manifest type needs its binding, which a test
//! insists on.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

pub use crate::api::reference::SERVICE_REFERENCE;

/// The reference, parsed. Not kept: it is read once, to build the manifest
/// schema, and parsed it holds megabytes that a command would carry to its
/// end (measured: docs/performance.md, Figures behind choices in the code).
#[must_use]
pub fn service_reference() -> Value {
    serde_json::from_str(SERVICE_REFERENCE).unwrap_or(Value::Null)
}

/// A service schema a part of a manifest is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// A component schema of the reference, by name (`#/components/schemas/<name>`).
    Schema(&'static str),
    /// The schema of the path parameter of this name (the same in every operation that
    /// has it).
    PathParameter(&'static str),
}

/// A part of the manifest schema and the service schemas it is sent as.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// JSON pointer into the manifest schema (`/$defs/SectionSpec`,
    /// `/$defs/ProjectDocument/properties/id`).
    pub manifest: &'static str,
    /// What the service receives (or stores) it as.
    pub service: &'static [Service],
}

/// Where each part of a manifest goes at the service. What is reached from a bound part
/// (its fields, items, the types it refers to) is bound by walking, not listed. Integration
/// documents are bound by provider to the body of `PUT /v2/integrations/<provider>`.
pub const BINDINGS: &[Binding] = &[
    Binding {
        manifest: "/$defs/ProjectDocument/properties/id",
        service: &[Service::PathParameter("project_id")],
    },
    Binding {
        manifest: "/$defs/LogStreamSpec/properties/id",
        service: &[Service::PathParameter("log_stream_id")],
    },
    Binding {
        manifest: "/$defs/ExperimentSpec/properties/id",
        service: &[Service::PathParameter("experiment_id")],
    },
    Binding {
        manifest: "/$defs/MetricSettingsSpec",
        service: &[Service::Schema("MetricSettingsRequest")],
    },
    Binding {
        manifest: "/$defs/TrendsSpec",
        service: &[
            Service::Schema("TrendsDashboardUpdateRequest"),
            Service::Schema("TrendsDashboardResponse"),
        ],
    },
    Binding {
        manifest: "/$defs/SectionSpec",
        service: &[
            Service::Schema("SectionCreateRequest"),
            Service::Schema("SectionUpdateRequest"),
            Service::Schema("SectionResponse"),
        ],
    },
    Binding {
        manifest: "/$defs/WidgetSpec",
        service: &[
            Service::Schema("WidgetCreateRequest"),
            Service::Schema("WidgetUpdateRequest"),
            Service::Schema("WidgetResponse"),
        ],
    },
    Binding {
        manifest: "/$defs/DashboardSpec",
        service: &[
            Service::Schema("TrendsDashboardDuplicateRequest"),
            Service::Schema("TrendsDashboardUpdateRequest"),
            Service::Schema("TrendsDashboardResponse"),
        ],
    },
];

/// Every binding: the core's [`BINDINGS`], then those of the kinds that keep
/// their own (`crate::kinds::LIMIT_BINDINGS`).
pub fn bindings() -> impl Iterator<Item = &'static Binding> {
    BINDINGS
        .iter()
        .chain(crate::kinds::LIMIT_BINDINGS.iter().flat_map(|b| b.iter()))
}

/// Manifest definitions that are not sent to the service as such: the documents and runs
/// are addresses (their parts are bound), a secret is a reference to the environment.
pub const UNSENT: &[&str] = &[
    "ProjectDocument",
    "LogStreamSpec",
    "ExperimentSpec",
    "IntegrationDocument",
    "EnvRef",
    // A custom scorer's scope names projects; their ids are sent.
    "ScopeSpec",
    // Read by evalctl alone (`crate::policy`): never sent to the service.
    "PolicyDocument",
    "RuleSpec",
    "SettingsDocument",
    "GuardSettings",
    // The judge-call forecast's (`kind: Pricing`, a log stream's `forecast`):
    // read by evalctl, never sent.
    "PricingDocument",
    "Price",
    "TrafficSpec",
    // `latest` or a version number: resolved to the number selected.
    "SelectedVersion",
];

/// One limit of the service found for a manifest field.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    /// JSON pointer of the manifest schema it applies to.
    pub manifest: String,
    /// The keyword (`maxItems`, `format`, ...).
    pub keyword: String,
    /// Its value, as the manifest schema holds it (`uuid4` becomes `uuid`, `50.0` `50`).
    pub value: Value,
    /// JSON pointer of the reference schema it came from.
    pub service: String,
    /// Whether the manifest schema changed: false when the manifest type already had the
    /// limit, or a stricter one.
    pub written: bool,
}

/// Writes the limits of `reference` (an OpenAPI document shaped like the service's) into
/// `schema` (the manifest schema, with its `$defs`), as the module docs describe, and
/// returns what was copied, in the order found; the definitions the walk reached are
/// recorded in [`Applied::reached`].
pub fn apply(schema: &mut Value, reference: &Value) -> Applied {
    apply_with(schema, reference, bindings(), true)
}

/// [`apply`] with only `bindings`, and the integrations' bodies when
/// `integrations`: what a kind's own test of its limits walks
/// (`crate::kinds::LIMIT_BINDINGS`).
pub(crate) fn apply_with<'b>(
    schema: &mut Value,
    reference: &Value,
    bindings: impl IntoIterator<Item = &'b Binding>,
    integrations: bool,
) -> Applied {
    let mut walk = Walk {
        manifest: &*schema,
        reference,
        patches: Vec::new(),
        visited: BTreeSet::new(),
        reached: BTreeSet::new(),
    };
    for binding in bindings {
        for service in binding.service {
            if let Some((schema, at)) = service_schema(reference, *service) {
                walk.pair(binding.manifest.to_owned(), schema, at, 0);
            }
        }
    }
    let branches = if integrations {
        integration_branches(schema)
    } else {
        Vec::new()
    };
    for (branch, provider) in branches {
        let path = format!(
            "/paths/~1v2~1integrations~1{provider}/put/requestBody/content/application~1json/schema"
        );
        if let Some(body) = reference.pointer(&path) {
            walk.pair(branch, body, format!("#{path}"), 0);
        }
    }
    let Walk {
        patches, reached, ..
    } = walk;
    let derived = patches
        .into_iter()
        .map(|patch| Derived {
            written: write(schema, &patch),
            ..patch
        })
        .collect();
    Applied { derived, reached }
}

/// What [`apply`] did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Each limit of the service met on a manifest field, in the order found (a limit
    /// met twice, through two service schemas, is listed twice).
    pub derived: Vec<Derived>,
    /// The names of the manifest definitions the walk paired with a service schema.
    pub reached: BTreeSet<String>,
}

#[cfg(test)]
impl Applied {
    /// Each derived limit on one line: where in the manifest schema, what,
    /// and from where (what the limits' snapshot tests compare).
    pub(crate) fn listing(&self) -> String {
        self.derived
            .iter()
            .map(|d| {
                let mark = if d.written { "" } else { " (had it)" };
                format!(
                    "{} {}={}{mark} <- {}\n",
                    d.manifest, d.keyword, d.value, d.service
                )
            })
            .collect()
    }
}

/// The schema of `service` in `reference`, with its pointer.
fn service_schema(reference: &Value, service: Service) -> Option<(&Value, String)> {
    match service {
        Service::Schema(name) => {
            let at = format!("/components/schemas/{name}");
            reference.pointer(&at).map(|s| (s, format!("#{at}")))
        }
        Service::PathParameter(name) => {
            let paths = reference.get("paths")?.as_object()?;
            for (path, operations) in paths {
                for (method, operation) in operations.as_object().into_iter().flatten() {
                    let parameters = operation.get("parameters").and_then(Value::as_array);
                    for (i, parameter) in parameters.into_iter().flatten().enumerate() {
                        if parameter.get("name").and_then(Value::as_str) == Some(name)
                            && parameter.get("in").and_then(Value::as_str) == Some("path")
                            && let Some(schema) = parameter.get("schema")
                        {
                            let path = escape(path);
                            let at = format!("#/paths/{path}/{method}/parameters/{i}/schema");
                            return Some((schema, at));
                        }
                    }
                }
            }
            None
        }
    }
}

/// Each provider branch of the Integration document: its pointer and provider.
fn integration_branches(schema: &Value) -> Vec<(String, String)> {
    let at = "/$defs/IntegrationDocument/oneOf";
    schema
        .pointer(at)
        .and_then(Value::as_array)
        .map(|branches| {
            branches
                .iter()
                .enumerate()
                .filter_map(|(i, b)| {
                    let provider = b.pointer("/properties/provider/const")?.as_str()?;
                    Some((format!("{at}/{i}"), provider.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Keywords copied for each JSON type.
const STRING_LIMITS: [&str; 4] = ["minLength", "maxLength", "pattern", "format"];
const NUMBER_LIMITS: [&str; 5] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
const ARRAY_LIMITS: [&str; 3] = ["minItems", "maxItems", "uniqueItems"];
const OBJECT_LIMITS: [&str; 2] = ["minProperties", "maxProperties"];

/// How deep the walk goes (recursive types end through `visited` long before).
const MAX_WALK: usize = 64;

struct Walk<'a> {
    manifest: &'a Value,
    reference: &'a Value,
    patches: Vec<Derived>,
    /// Pairs already walked (manifest pointer, service pointer), so recursive types end.
    visited: BTreeSet<(String, String)>,
    reached: BTreeSet<String>,
}

impl<'a> Walk<'a> {
    /// Walks the manifest schema at `at` beside the service schema `service` (at
    /// `service_at` in the reference).
    fn pair(&mut self, at: String, service: &'a Value, service_at: String, depth: usize) {
        if depth > MAX_WALK || !self.visited.insert((at.clone(), service_at.clone())) {
            return;
        }
        let Some(manifest) = self.manifest.pointer(&at) else {
            return;
        };
        if let Some(target) = manifest
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            if let Some(name) = target.strip_prefix("/$defs/") {
                self.reached.insert(name.to_owned());
            }
            return self.pair(target.to_owned(), service, service_at, depth + 1);
        }
        if let Some(name) = at.strip_prefix("/$defs/").filter(|n| !n.contains('/')) {
            self.reached.insert(name.to_owned());
        }
        let alternatives = self.alternatives(service, service_at, 0);
        if let Some((keyword, branches)) = union(manifest) {
            self.pair_union(&at, keyword, branches, &alternatives, depth);
            return;
        }
        let kind = json_type(manifest);
        let matching: Vec<&(&Value, String)> = alternatives
            .iter()
            .filter(|(s, _)| compatible(kind, s))
            .collect();
        // A union of services of one shape each: only the one of the manifest's shape.
        let [(service, service_at)] = matching.as_slice() else {
            return;
        };
        let (service, service_at) = (*service, service_at.clone());
        let keywords: &[&str] = match kind {
            Some("string") => &STRING_LIMITS,
            Some("integer" | "number") => &NUMBER_LIMITS,
            Some("array") => &ARRAY_LIMITS,
            Some("object") => &OBJECT_LIMITS,
            _ => &[],
        };
        for keyword in keywords {
            if let Some(value) = service.get(*keyword).and_then(|v| limit(keyword, v)) {
                self.patches.push(Derived {
                    manifest: at.clone(),
                    keyword: (*keyword).to_owned(),
                    value,
                    service: service_at.clone(),
                    written: false,
                });
            }
        }
        match kind {
            Some("object") => {
                let names: Vec<String> = manifest
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                for name in names {
                    if let Some(child) = service.get("properties").and_then(|p| p.get(&name)) {
                        self.pair(
                            format!("{at}/properties/{}", escape(&name)),
                            child,
                            format!("{service_at}/properties/{}", escape(&name)),
                            depth + 1,
                        );
                    }
                }
                if manifest
                    .get("additionalProperties")
                    .is_some_and(Value::is_object)
                    && let Some(values) = service
                        .get("additionalProperties")
                        .filter(|v| v.is_object())
                {
                    self.pair(
                        format!("{at}/additionalProperties"),
                        values,
                        format!("{service_at}/additionalProperties"),
                        depth + 1,
                    );
                }
            }
            Some("array") => {
                if manifest.get("items").is_some_and(Value::is_object)
                    && let Some(items) = service.get("items").filter(|v| v.is_object())
                {
                    self.pair(
                        format!("{at}/items"),
                        items,
                        format!("{service_at}/items"),
                        depth + 1,
                    );
                }
            }
            _ => {}
        }
    }

    /// Pairs the branches of the manifest union at `at` (`keyword` is `oneOf` or `anyOf`)
    /// with the service's alternatives: by tag when both are tagged the same way, else by
    /// JSON type.
    fn pair_union(
        &mut self,
        at: &str,
        keyword: &str,
        branches: &'a [Value],
        alternatives: &[(&'a Value, String)],
        depth: usize,
    ) {
        let manifest_tags = tags(branches.iter().map(|b| self.resolve_manifest(b)));
        let service_tags = tags(alternatives.iter().map(|(s, _)| *s));
        for (i, branch) in branches.iter().enumerate() {
            let branch_at = format!("{at}/{keyword}/{i}");
            let candidates: Vec<&(&Value, String)> = match (&manifest_tags, &service_tags) {
                (Some((key, values)), Some((service_key, service_values)))
                    if key == service_key =>
                {
                    let tag = &values[i];
                    alternatives
                        .iter()
                        .zip(service_values)
                        .filter(|(_, v)| *v == tag)
                        .map(|(a, _)| a)
                        .collect()
                }
                _ => {
                    let kind = json_type(self.resolve_manifest(branch));
                    alternatives
                        .iter()
                        .filter(|(s, _)| compatible(kind, s))
                        .collect()
                }
            };
            if let [(service, service_at)] = candidates.as_slice() {
                self.pair(branch_at, service, service_at.clone(), depth + 1);
            }
        }
    }

    /// The schema a manifest schema refers to (itself when it is no reference).
    fn resolve_manifest(&self, schema: &'a Value) -> &'a Value {
        let mut current = schema;
        for _ in 0..MAX_WALK {
            match current
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix('#'))
                .and_then(|r| self.manifest.pointer(r))
            {
                Some(next) => current = next,
                None => break,
            }
        }
        current
    }

    /// The service schemas `schema` may be, with their pointers: references followed, a
    /// union's branches (without `null`) flattened, a single `allOf` unwrapped.
    fn alternatives(
        &self,
        schema: &'a Value,
        at: String,
        depth: usize,
    ) -> Vec<(&'a Value, String)> {
        if depth > MAX_WALK {
            return Vec::new();
        }
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            return match reference
                .strip_prefix('#')
                .and_then(|r| self.reference.pointer(r))
            {
                Some(target) => self.alternatives(target, reference.to_owned(), depth + 1),
                None => Vec::new(),
            };
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = schema.get(keyword).and_then(Value::as_array) {
                return branches
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.get("type").and_then(Value::as_str) != Some("null"))
                    .flat_map(|(i, b)| {
                        self.alternatives(b, format!("{at}/{keyword}/{i}"), depth + 1)
                    })
                    .collect();
            }
        }
        if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            return self.alternatives(only, format!("{at}/allOf/0"), depth + 1);
        }
        vec![(schema, at)]
    }
}

/// The branches of a union schema, with the keyword.
fn union(schema: &Value) -> Option<(&'static str, &[Value])> {
    ["oneOf", "anyOf"].into_iter().find_map(|keyword| {
        schema
            .get(keyword)
            .and_then(Value::as_array)
            .map(|b| (keyword, b.as_slice()))
    })
}

/// The property that tags every branch (`const`, or an `enum` of one value), and each
/// branch's tag, when the branches are tagged objects.
fn tags<'v>(branches: impl Iterator<Item = &'v Value>) -> Option<(String, Vec<Value>)> {
    let branches: Vec<&Value> = branches.collect();
    let first = branches.first()?.get("properties")?.as_object()?;
    first.keys().find_map(|key| {
        let values: Option<Vec<Value>> = branches
            .iter()
            .map(|b| {
                let property = b.get("properties")?.get(key)?;
                property
                    .get("const")
                    .cloned()
                    .or_else(|| match property.get("enum") {
                        Some(Value::Array(one)) if one.len() == 1 => one.first().cloned(),
                        _ => None,
                    })
            })
            .collect();
        values.map(|values| (key.clone(), values))
    })
}

/// A schema's JSON type, when it names one.
fn json_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        _ if schema.get("properties").is_some() => Some("object"),
        _ => None,
    }
}

/// Whether a service schema holds values of the manifest's JSON type `kind`.
fn compatible(kind: Option<&str>, service: &Value) -> bool {
    let Some(kind) = kind else {
        return false;
    };
    match json_type(service) {
        Some(theirs) => {
            theirs == kind
                || (matches!(kind, "integer" | "number") && matches!(theirs, "integer" | "number"))
        }
        None => false,
    }
}

/// A service keyword's value as the manifest schema holds it, or `None` when it is no
/// limit the manifest can use (a format the loader does not check).
fn limit(keyword: &str, value: &Value) -> Option<Value> {
    match keyword {
        "format" => {
            let format = value.as_str()?;
            match format {
                "uri" | "date-time" | "date" => Some(Value::from(format)),
                f if f.strip_prefix("uuid").is_some_and(|v| v.len() <= 1) => {
                    Some(Value::from("uuid"))
                }
                _ => None,
            }
        }
        "pattern" => value.as_str().map(Value::from),
        "uniqueItems" => (value == &Value::Bool(true)).then_some(Value::Bool(true)),
        _ => Some(integral(value.as_f64()?)),
    }
}

/// A number as JSON, written as an integer when it is one (`50.0` → `50`).
fn integral(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        // Integral and well within i64: the cast is exact.
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

/// Writes `patch` into `schema`, keeping the stricter of an existing and the new limit;
/// whether the schema changed.
fn write(schema: &mut Value, patch: &Derived) -> bool {
    let Some(Value::Object(target)) = schema.pointer_mut(&patch.manifest) else {
        return false;
    };
    let keyword = patch.keyword.as_str();
    let new = &patch.value;
    let Some(old) = target.get(keyword) else {
        target.insert(keyword.to_owned(), new.clone());
        return true;
    };
    if old == new {
        return false;
    }
    let stricter = match keyword {
        "minLength" | "minItems" | "minProperties" | "minimum" | "exclusiveMinimum" => {
            number(new) > number(old)
        }
        "maxLength" | "maxItems" | "maxProperties" | "maximum" | "exclusiveMaximum" => {
            number(new) < number(old)
        }
        "pattern" => return add_pattern(target, new),
        // A different format or multiple: the manifest's own stays.
        _ => false,
    };
    if stricter {
        target.insert(keyword.to_owned(), new.clone());
    }
    stricter
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or(f64::NAN)
}

/// Adds a second pattern the value must also match, under `allOf`; whether it was new.
fn add_pattern(target: &mut Map<String, Value>, pattern: &Value) -> bool {
    let entry = serde_json::json!({ "pattern": pattern });
    match target.get_mut("allOf") {
        Some(Value::Array(all)) if !all.contains(&entry) => {
            all.push(entry);
            true
        }
        Some(_) => false,
        None => {
            target.insert("allOf".to_owned(), Value::Array(vec![entry]));
            true
        }
    }
}

/// A property name as a JSON pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests;

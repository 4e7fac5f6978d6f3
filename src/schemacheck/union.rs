//! `anyOf`/`oneOf`: nullable wrappers (`X | null` reports X's violations
//! untagged), discriminated unions (an OpenAPI `discriminator`, or in the
//! JSON Schema dialect a `const` tag property all branches share), and plain
//! unions, whose branches are named pydantic-style (`str`, `list[str]`, a
//! model's name) when their violations have to be told apart.

use serde_json::{Map, Value};

use super::engine::{Level, Walker, model_expected};
use super::pydantic::{py_repr, py_str};
use super::scalar::{self, json_eq};
use super::violation::{PathSeg, Violation, ViolationKind};
use super::{Dialect, MAX_HOPS, display_name, ref_name};

/// A discriminated union: the tag property and, in union order, each tag
/// with the branch it selects.
struct Discriminated<'s> {
    property: &'s str,
    choices: Vec<(Value, &'s Value)>,
}

/// What a union asks for, decided without recursing (so that the recursive
/// path keeps a small stack frame).
enum Plan<'s> {
    /// Nothing more: the value is an accepted null, or a tag problem has
    /// been reported.
    Done,
    /// Apply one schema, untagged (`X | null`, a one-branch union).
    One(&'s Value),
    /// Apply the branch a discriminator selected, under its tag.
    Tagged(String, &'s Value),
    /// Try every branch of a plain union.
    Plain(Vec<&'s Value>),
}

/// Applies `anyOf` (`one_of == false`) or `oneOf` branches of `map`.
pub(super) fn check<'s>(
    w: &mut Walker<'s>,
    map: &'s Map<String, Value>,
    branches: &'s [Value],
    one_of: bool,
    value: &Value,
    level: Level,
) {
    match plan(w, map, branches, value, level.hops()) {
        Plan::Done => {}
        Plan::One(schema) => w.check(schema, value, level.hop(), None),
        Plan::Tagged(tag, branch) => {
            w.path.push(PathSeg::Tag(tag));
            w.check(branch, value, level.hop(), None);
            w.path.pop();
        }
        Plan::Plain(rest) => plain(w, &rest, one_of, value, level),
    }
}

#[inline(never)]
fn plan<'s>(
    w: &mut Walker<'s>,
    map: &'s Map<String, Value>,
    branches: &'s [Value],
    value: &Value,
    hops: usize,
) -> Plan<'s> {
    let (nulls, rest): (Vec<&'s Value>, Vec<&'s Value>) =
        branches.iter().partition(|b| is_null_schema(w, b, hops));
    if value.is_null() && !nulls.is_empty() {
        return Plan::Done;
    }
    if let Some(disc) = discriminator(w, map, &rest, hops) {
        return tagged(w, &disc, value);
    }
    match (rest.as_slice(), nulls.first()) {
        // Only `null` branches, and the value is not null.
        ([], Some(null)) => Plan::One(null),
        ([], None) => Plan::Done,
        ([one], _) => Plan::One(one),
        _ => Plan::Plain(rest),
    }
}

fn plain<'s>(w: &mut Walker<'s>, rest: &[&'s Value], one_of: bool, value: &Value, level: Level) {
    let exclusive = one_of && w.schemas.dialect() == Dialect::JsonSchema;
    let mut results: Vec<Vec<Violation>> = Vec::with_capacity(rest.len());
    for branch in rest {
        let found = w.trial(branch, value, level.hop());
        let valid = found.is_empty();
        results.push(found);
        if valid && !exclusive {
            return;
        }
    }
    finish_plain(w, rest, results, value, level.hops());
}

/// Reports a plain union's outcome once every branch has been tried.
#[inline(never)]
fn finish_plain(
    w: &mut Walker<'_>,
    rest: &[&Value],
    mut results: Vec<Vec<Violation>>,
    value: &Value,
    hops: usize,
) {
    let matched: Vec<usize> = (0..results.len())
        .filter(|&i| results[i].is_empty())
        .collect();
    match matched.as_slice() {
        [_] => return,
        [] => {}
        several => {
            let labels = several.iter().map(|&i| label(w, rest[i], hops)).collect();
            w.report(ViolationKind::AmbiguousOneOf { matched: labels }, value);
            return;
        }
    }
    if w.schemas.dialect() == Dialect::JsonSchema
        && let Some(i) = intended_branch(w, rest, value, hops)
        && let Some(found) = results.get_mut(i)
    {
        w.out.append(found);
        return;
    }
    let at = w.path.len();
    for (branch, found) in rest.iter().zip(results) {
        let tag = label(w, branch, hops);
        for mut v in found {
            v.path.insert(at, PathSeg::Tag(tag.clone()));
            w.out.push(v);
        }
    }
}

/// Picks the branch a discriminated union's tag selects, reporting a value
/// that is not an object, a missing tag or an unknown one.
fn tagged<'s>(w: &mut Walker<'s>, disc: &Discriminated<'s>, value: &Value) -> Plan<'s> {
    let Value::Object(obj) = value else {
        w.report(model_expected(), value);
        return Plan::Done;
    };
    let tag = obj.get(disc.property);
    if let Some(tag) = tag
        && let Some((_, branch)) = disc.choices.iter().find(|(t, _)| json_eq(t, tag))
    {
        return Plan::Tagged(py_str(tag), branch);
    }
    let mut expected: Vec<String> = Vec::new();
    for (t, _) in &disc.choices {
        let t = py_str(t);
        if !expected.contains(&t) {
            expected.push(t);
        }
    }
    let discriminator = disc.property.to_owned();
    let kind = match tag {
        None => ViolationKind::UnionTagMissing {
            discriminator,
            expected,
        },
        Some(tag) => ViolationKind::UnionTagInvalid {
            discriminator,
            tag: tag.clone(),
            expected,
        },
    };
    w.report(kind, value);
    Plan::Done
}

/// The union's discriminator: an OpenAPI `discriminator` (tags from its
/// `mapping`, else the branches' `const` tags, else the branches' schema
/// names), or in the JSON Schema dialect the first property of the first
/// branch that every branch pins to distinct `const`/`enum` values.
fn discriminator<'s>(
    w: &Walker<'s>,
    map: &'s Map<String, Value>,
    rest: &[&'s Value],
    hops: usize,
) -> Option<Discriminated<'s>> {
    if let Some(d) = map.get("discriminator").and_then(Value::as_object) {
        let property = d.get("propertyName")?.as_str()?;
        let mapping = d.get("mapping").and_then(Value::as_object);
        let mut choices: Vec<(Value, &'s Value)> = Vec::new();
        for &branch in rest {
            let reference = branch.get("$ref").and_then(Value::as_str);
            let mut tags: Vec<Value> = Vec::new();
            if let (Some(r), Some(m)) = (reference, mapping) {
                for (tag, target) in m {
                    if target.as_str().map(mapping_ref).as_deref() == Some(r) {
                        tags.push(Value::String(tag.clone()));
                    }
                }
            }
            if tags.is_empty() {
                tags = const_tags(w, branch, property, hops);
            }
            if tags.is_empty()
                && let Some(r) = reference
            {
                tags.push(Value::String(display_name(ref_name(r))));
            }
            choices.extend(tags.into_iter().map(|t| (t, branch)));
        }
        for (tag, target) in mapping.into_iter().flatten() {
            let known = choices.iter().any(|(t, _)| t.as_str() == Some(tag));
            if let (false, Some(target)) = (known, target.as_str()) {
                let reference = mapping_ref(target);
                if let Some(schema) = w.schemas.get(&reference) {
                    choices.push((Value::String(tag.clone()), schema));
                }
            }
        }
        return Some(Discriminated { property, choices });
    }
    if w.schemas.dialect() == Dialect::Pydantic || rest.len() < 2 {
        return None;
    }
    let first = object_map(w, rest[0], hops)?;
    let props = first.get("properties").and_then(Value::as_object)?;
    'candidates: for property in props.keys() {
        let mut choices: Vec<(Value, &'s Value)> = Vec::new();
        for &branch in rest {
            let tags = const_tags(w, branch, property, hops);
            if tags.is_empty() {
                continue 'candidates;
            }
            for tag in tags {
                if choices.iter().any(|(t, _)| json_eq(t, &tag)) {
                    continue 'candidates;
                }
                choices.push((tag, branch));
            }
        }
        return Some(Discriminated { property, choices });
    }
    None
}

/// A discriminator mapping value as a reference: a bare schema name means
/// `#/components/schemas/<name>`.
fn mapping_ref(target: &str) -> String {
    if target.starts_with('#') || target.contains('/') {
        target.to_owned()
    } else {
        format!("#/components/schemas/{target}")
    }
}

/// The values a branch pins `property` to (`const`, or a string `enum`).
fn const_tags<'s>(w: &Walker<'s>, branch: &'s Value, property: &str, hops: usize) -> Vec<Value> {
    let Some(prop) = find_property(w, branch, property, hops) else {
        return Vec::new();
    };
    let prop = w.schemas.follow_refs(prop, hops).unwrap_or(prop);
    if let Some(c) = prop.get("const") {
        return vec![c.clone()];
    }
    match prop.get("enum").and_then(Value::as_array) {
        Some(values) if values.iter().all(Value::is_string) => values.clone(),
        _ => Vec::new(),
    }
}

/// The schema of `property` in a branch: its own `properties`, else those of
/// its `$ref` target or `allOf` members.
fn find_property<'s>(
    w: &Walker<'s>,
    schema: &'s Value,
    property: &str,
    hops: usize,
) -> Option<&'s Value> {
    if hops > MAX_HOPS {
        return None;
    }
    let map = schema.as_object()?;
    if let Some(p) = map.get("properties").and_then(|p| p.get(property)) {
        return Some(p);
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str)
        && let Ok((target, _)) = w.schemas.resolve_ref(r)
        && let Some(p) = find_property(w, target, property, hops + 1)
    {
        return Some(p);
    }
    let all = map.get("allOf").and_then(Value::as_array)?;
    all.iter()
        .find_map(|sub| find_property(w, sub, property, hops + 1))
}

fn object_map<'s>(
    w: &Walker<'s>,
    schema: &'s Value,
    hops: usize,
) -> Option<&'s Map<String, Value>> {
    w.schemas.follow_refs(schema, hops)?.as_object()
}

/// Whether a branch only admits `null` (`type: null`).
fn is_null_schema(w: &Walker<'_>, schema: &Value, hops: usize) -> bool {
    let Some(s) = w.schemas.follow_refs(schema, hops) else {
        return false;
    };
    match s.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.len() == 1 && ts[0] == "null",
        _ => false,
    }
}

/// The one branch a failing value evidently meant, if there is one: the only
/// branch admitting the value's JSON type; among several object branches,
/// the only one whose required properties are all present (preferring one
/// that also declares every key the value has).
fn intended_branch(w: &Walker<'_>, rest: &[&Value], value: &Value, hops: usize) -> Option<usize> {
    let admitting: Vec<usize> = (0..rest.len())
        .filter(|&i| admits(w, rest[i], value, hops))
        .collect();
    if let [only] = admitting.as_slice() {
        return Some(*only);
    }
    let Value::Object(obj) = value else {
        return None;
    };
    let mut complete = Vec::new();
    let mut fitting = Vec::new();
    for &i in &admitting {
        let Some(map) = object_map(w, rest[i], hops) else {
            continue;
        };
        let required = map.get("required").and_then(Value::as_array);
        if required
            .into_iter()
            .flatten()
            .all(|r| r.as_str().is_some_and(|r| obj.contains_key(r)))
        {
            complete.push(i);
            let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
            let props = map.get("properties").and_then(Value::as_object);
            if !closed || obj.keys().all(|k| props.is_some_and(|p| p.contains_key(k))) {
                fitting.push(i);
            }
        }
    }
    match (fitting.as_slice(), complete.as_slice()) {
        ([only], _) | (_, [only]) => Some(*only),
        _ => None,
    }
}

/// Whether a schema accepts the JSON type of `value` (its constraints
/// aside): `type`, the types of `enum`/`const` values, and unions of those.
fn admits(w: &Walker<'_>, schema: &Value, value: &Value, hops: usize) -> bool {
    if hops > MAX_HOPS {
        return true;
    }
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(b) => return *b,
        _ => return true,
    };
    if let Some(r) = map.get("$ref").and_then(Value::as_str)
        && let Ok((target, _)) = w.schemas.resolve_ref(r)
        && !admits(w, target, value, hops + 1)
    {
        return false;
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        return values.iter().any(|v| same_type(v, value));
    }
    if let Some(c) = map.get("const") {
        return same_type(c, value);
    }
    if let Some(ty) = map.get("type") {
        let nullable = value.is_null() && map.get("nullable") == Some(&Value::Bool(true));
        if !nullable && !scalar::type_matches(ty, value) {
            return false;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = map.get(key).and_then(Value::as_array)
            && !branches.iter().any(|b| admits(w, b, value, hops + 1))
        {
            return false;
        }
    }
    if let Some(all) = map.get("allOf").and_then(Value::as_array) {
        return all.iter().all(|b| admits(w, b, value, hops + 1));
    }
    true
}

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// A branch's name as pydantic puts it in `loc`: `str`, `constrained-str`,
/// `int`, `float`, `bool`, `none`, `list[str]`, `dict[str,int]`,
/// `literal['a','b']`, `str-enum[Name]`, a model's class name (its `title`,
/// else its schema name without module prefix and `-Input`/`-Output`),
/// `nullable[..]`, `union[..]`, `tagged-union[..]`, `uuid`, `datetime`,
/// `url`, or `any`.
pub(super) fn label(w: &Walker<'_>, schema: &Value, hops: usize) -> String {
    if hops > MAX_HOPS {
        return "any".to_owned();
    }
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(false) => return "never".to_owned(),
        _ => return "any".to_owned(),
    };
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        let Ok((target, raw)) = w.schemas.resolve_ref(r) else {
            return "any".to_owned();
        };
        let name = display_name(raw);
        if let Some(t) = target.as_object() {
            let title = t.get("title").and_then(Value::as_str);
            if t.contains_key("enum") {
                let prefix = match t.get("type").and_then(Value::as_str) {
                    Some("string") => "str-enum",
                    Some("integer") => "int-enum",
                    Some("number") => "float-enum",
                    _ => "enum",
                };
                return format!(
                    "{prefix}[{}]",
                    title.map_or_else(|| class_name(&name), str::to_owned)
                );
            }
            if t.contains_key("properties") {
                return title.map_or_else(|| class_name(&name), str::to_owned);
            }
        }
        return label(w, target, hops + 1);
    }
    if let Some(c) = map.get("const") {
        return format!("literal[{}]", py_repr(c));
    }
    if let Some(values) = map.get("enum").and_then(Value::as_array) {
        let all: Vec<String> = values.iter().map(py_repr).collect();
        return format!("literal[{}]", all.join(","));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = map.get(key).and_then(Value::as_array) {
            return union_label(w, map, branches, hops);
        }
    }
    match map.get("type") {
        Some(Value::String(t)) => type_label(w, map, t, hops),
        Some(Value::Array(ts)) => {
            let names: Vec<String> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .map(|t| type_label(w, map, t, hops))
                .collect();
            let inner = match names.as_slice() {
                [one] => one.clone(),
                _ => format!("union[{}]", names.join(",")),
            };
            if ts.iter().any(|t| t == "null") {
                format!("nullable[{inner}]")
            } else {
                inner
            }
        }
        _ if map.contains_key("properties") => object_label(map),
        _ => "any".to_owned(),
    }
}

fn union_label(
    w: &Walker<'_>,
    map: &Map<String, Value>,
    branches: &[Value],
    hops: usize,
) -> String {
    let (nulls, rest): (Vec<&Value>, Vec<&Value>) =
        branches.iter().partition(|b| is_null_schema(w, b, hops));
    let names: Vec<String> = rest.iter().map(|b| label(w, b, hops + 1)).collect();
    let inner = match names.as_slice() {
        [one] => one.clone(),
        _ if map.contains_key("discriminator") => format!("tagged-union[{}]", names.join(",")),
        _ => format!("union[{}]", names.join(",")),
    };
    if nulls.is_empty() {
        inner
    } else {
        format!("nullable[{inner}]")
    }
}

fn type_label(w: &Walker<'_>, map: &Map<String, Value>, ty: &str, hops: usize) -> String {
    let constrained = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
    let numeric = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ];
    match ty {
        "string" => {
            let format = map.get("format").and_then(Value::as_str);
            match format.and_then(super::format::Format::parse) {
                Some(super::format::Format::Uuid) => "uuid".to_owned(),
                Some(super::format::Format::DateTime) => "datetime".to_owned(),
                Some(super::format::Format::Date) => "date".to_owned(),
                Some(super::format::Format::Uri) => "url".to_owned(),
                None if constrained(&["minLength", "maxLength", "pattern"]) => {
                    "constrained-str".to_owned()
                }
                None => "str".to_owned(),
            }
        }
        "integer" if constrained(&numeric) => "constrained-int".to_owned(),
        "integer" => "int".to_owned(),
        "number" if constrained(&numeric) => "constrained-float".to_owned(),
        "number" => "float".to_owned(),
        "boolean" => "bool".to_owned(),
        "null" => "none".to_owned(),
        "array" => {
            let items = map
                .get("items")
                .map_or_else(|| "any".to_owned(), |i| label(w, i, hops + 1));
            format!("list[{items}]")
        }
        "object" if map.contains_key("properties") => object_label(map),
        "object" => {
            let values = match map.get("additionalProperties") {
                Some(s @ Value::Object(_)) => label(w, s, hops + 1),
                _ => "any".to_owned(),
            };
            format!("dict[str,{values}]")
        }
        _ => "any".to_owned(),
    }
}

/// An inline object branch: its title, else the one property it requires
/// (serde's externally tagged variants), else `model`.
fn object_label(map: &Map<String, Value>) -> String {
    if let Some(title) = map.get("title").and_then(Value::as_str) {
        return title.to_owned();
    }
    match map
        .get("required")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([Value::String(only)]) => only.clone(),
        _ => "model".to_owned(),
    }
}

/// `api__schemas__annotation__TreeChoiceNode-Input` -> `TreeChoiceNode`.
fn class_name(name: &str) -> String {
    let short = name.rsplit("__").find(|s| !s.is_empty()).unwrap_or(name);
    let short = short
        .strip_suffix("-Input")
        .or_else(|| short.strip_suffix("-Output"))
        .unwrap_or(short);
    short.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_lose_module_prefixes_and_io_suffixes() {
        assert_eq!(
            class_name("api__schemas__annotation__TreeChoiceNode-Input"),
            "TreeChoiceNode"
        );
        assert_eq!(class_name("NodeNameFilter"), "NodeNameFilter");
        assert_eq!(mapping_ref("X"), "#/components/schemas/X");
        assert_eq!(mapping_ref("#/$defs/X"), "#/$defs/X");
    }
}

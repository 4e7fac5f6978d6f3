//! Objects: `properties`, `required`, `additionalProperties`,
//! `patternProperties`, `propertyNames`, `min`/`maxProperties` and
//! (approximated) `unevaluatedProperties`, walked in the dialect's order:
//! the value's key order (JSON Schema) or the model's field order (pydantic).
//!
//! Like the rest of the walker, functions on the recursive path keep their
//! frames small and leave reporting to `#[inline(never)]` helpers.

use serde_json::{Map, Value};

use super::engine::{Level, Walker};
use super::scalar;
use super::violation::{PathSeg, ViolationKind};
use super::{Dialect, MAX_HOPS};

impl<'s> Walker<'s> {
    pub(super) fn check_object(
        &mut self,
        map: &'s Map<String, Value>,
        obj: &Map<String, Value>,
        value: &Value,
        level: Level,
    ) {
        if self.too_many_properties(map, obj.len(), value)
            || (descends_into_members(map) && self.too_deep(level, obj.is_empty()))
        {
            return;
        }
        let before = self.out.len();
        if let Some(names) = map.get("propertyNames") {
            self.check_property_names(names, obj, level);
        }
        let props = map.get("properties").and_then(Value::as_object);
        match self.schemas.dialect() {
            Dialect::JsonSchema => {
                for (key, member) in obj {
                    self.check_member(map, props, key, member, level);
                }
                self.missing_all(map, obj, value, false);
            }
            Dialect::Pydantic => {
                for (name, schema) in props.into_iter().flatten() {
                    match obj.get(name) {
                        Some(member) => {
                            self.path.push(PathSeg::Key(name.clone()));
                            self.child(schema, member, level);
                            self.path.pop();
                        }
                        None => self.missing_one(map, name, value),
                    }
                }
                self.missing_all(map, obj, value, true);
                for (key, member) in obj {
                    if !props.is_some_and(|p| p.contains_key(key)) {
                        self.check_member(map, None, key, member, level);
                    }
                }
            }
        }
        if self.out.len() == before {
            self.too_few_properties(map, obj.len(), value);
        }
    }

    fn check_property_names(&mut self, names: &'s Value, obj: &Map<String, Value>, level: Level) {
        for key in obj.keys() {
            self.path.push(PathSeg::Key(key.clone()));
            self.check(names, &Value::String(key.clone()), level.hop(), None);
            self.path.pop();
        }
    }

    #[inline(never)]
    fn too_many_properties(&mut self, map: &Map<String, Value>, len: usize, value: &Value) -> bool {
        match scalar::keyword_u64(map, "maxProperties") {
            Some(max) if len as u64 > max => {
                self.report(ViolationKind::TooManyProperties { max, actual: len }, value);
                true
            }
            _ => false,
        }
    }

    #[inline(never)]
    fn too_few_properties(&mut self, map: &Map<String, Value>, len: usize, value: &Value) {
        if let Some(min) = scalar::keyword_u64(map, "minProperties").filter(|m| (len as u64) < *m) {
            self.report(ViolationKind::TooFewProperties { min, actual: len }, value);
        }
    }

    /// Reports every `required` property the object lacks, in schema order;
    /// `undeclared_only` skips those listed in `properties` (the pydantic
    /// dialect has reported them in place).
    #[inline(never)]
    fn missing_all(
        &mut self,
        map: &Map<String, Value>,
        obj: &Map<String, Value>,
        value: &Value,
        undeclared_only: bool,
    ) {
        let props = map.get("properties").and_then(Value::as_object);
        for name in map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(name) = name.as_str() else { continue };
            if obj.contains_key(name)
                || (undeclared_only && props.is_some_and(|p| p.contains_key(name)))
            {
                continue;
            }
            self.missing(name, value);
        }
    }

    /// Reports `name` as missing if the schema requires it.
    #[inline(never)]
    fn missing_one(&mut self, map: &Map<String, Value>, name: &str, value: &Value) {
        let required = map.get("required").and_then(Value::as_array);
        if required.into_iter().flatten().any(|r| r == name) {
            self.missing(name, value);
        }
    }

    fn missing(&mut self, name: &str, parent: &Value) {
        self.path.push(PathSeg::Key(name.to_owned()));
        let kind = ViolationKind::Missing {
            field: name.to_owned(),
        };
        self.report(kind, parent);
        self.path.pop();
    }

    /// One member of an object: its declared schema, matching
    /// `patternProperties`, else `additionalProperties` /
    /// `unevaluatedProperties`.
    fn check_member(
        &mut self,
        map: &'s Map<String, Value>,
        props: Option<&'s Map<String, Value>>,
        key: &str,
        member: &Value,
        level: Level,
    ) {
        self.path.push(PathSeg::Key(key.to_owned()));
        let mut matched = false;
        if let Some(schema) = props.and_then(|p| p.get(key)) {
            matched = true;
            self.child(schema, member, level);
        }
        if let Some(patterns) = map.get("patternProperties").and_then(Value::as_object) {
            matched |= self.check_pattern_members(patterns, key, member, level);
        }
        if !matched && let Some(schema) = self.undeclared_member(map, key, member) {
            self.child(schema, member, level);
        }
        self.path.pop();
    }

    /// Applies every `patternProperties` schema whose pattern matches `key`;
    /// returns whether any did.
    fn check_pattern_members(
        &mut self,
        patterns: &'s Map<String, Value>,
        key: &str,
        member: &Value,
        level: Level,
    ) -> bool {
        let mut matched = false;
        for (pattern, schema) in patterns {
            if self.pattern_matches(pattern, key, member) {
                matched = true;
                self.child(schema, member, level);
            }
        }
        matched
    }

    #[inline(never)]
    fn pattern_matches(&mut self, pattern: &str, key: &str, member: &Value) -> bool {
        match self.schemas.regex(pattern).as_ref() {
            Ok(re) => re.is_match(key),
            Err(problem) => {
                self.report(ViolationKind::Schema(problem.clone()), member);
                false
            }
        }
    }

    /// What applies to a member no `properties`/`patternProperties` entry
    /// covers: the `additionalProperties` or `unevaluatedProperties` schema
    /// to descend into, or nothing (reporting an unknown field when the
    /// schema closes the object).
    #[inline(never)]
    fn undeclared_member(
        &mut self,
        map: &'s Map<String, Value>,
        key: &str,
        member: &Value,
    ) -> Option<&'s Value> {
        let allowed = match map.get("additionalProperties") {
            Some(Value::Bool(false)) => self.declared_names(map),
            Some(schema @ Value::Object(_)) => return Some(schema),
            _ => match map.get("unevaluatedProperties") {
                Some(schema @ (Value::Bool(false) | Value::Object(_))) => {
                    let declared = self.declared_names(map);
                    if declared.iter().any(|a| a == key) {
                        return None;
                    }
                    if schema.is_object() {
                        return Some(schema);
                    }
                    declared
                }
                _ => return None,
            },
        };
        let kind = ViolationKind::UnknownField {
            field: key.to_owned(),
            allowed,
        };
        self.report(kind, member);
        None
    }

    /// Property names declared by a schema and, for `unevaluatedProperties`,
    /// by the subschemas it applies in place (`$ref`, `allOf`, `anyOf`,
    /// `oneOf`), in schema order without duplicates.
    fn declared_names(&self, map: &'s Map<String, Value>) -> Vec<String> {
        let mut names = Vec::new();
        let deep = !map.contains_key("additionalProperties");
        self.collect_names(map, deep, 0, &mut names);
        names
    }

    fn collect_names(
        &self,
        map: &'s Map<String, Value>,
        deep: bool,
        hops: usize,
        names: &mut Vec<String>,
    ) {
        if hops > MAX_HOPS {
            return;
        }
        let props = map.get("properties").and_then(Value::as_object);
        for name in props.into_iter().flat_map(Map::keys) {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        if !deep {
            return;
        }
        let mut subs: Vec<&'s Value> = Vec::new();
        if let Some(reference) = map.get("$ref").and_then(Value::as_str)
            && let Ok((target, _)) = self.schemas.resolve_ref(reference)
        {
            subs.push(target);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            subs.extend(map.get(key).and_then(Value::as_array).into_iter().flatten());
        }
        for sub in subs {
            if let Some(sub) = sub.as_object() {
                self.collect_names(sub, true, hops + 1, names);
            }
        }
    }
}

/// Whether a schema looks at an object's members at all.
fn descends_into_members(map: &Map<String, Value>) -> bool {
    [
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
    ]
    .iter()
    .any(|k| map.contains_key(*k))
}

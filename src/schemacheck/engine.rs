//! The walker: applies a schema to a value, recursing into `$ref`s,
//! applicators, array items and object members (those in
//! [`super::object`]), and collects every violation with its path. Depth is bounded twice: by nesting of the value
//! ([`MAX_DEPTH`]) and by schema hops at one location ([`MAX_HOPS`]).
//!
//! Stack discipline: the functions on the recursive path ([`Walker::check`],
//! `check_array`, `child`, the object and union walkers) hold only what must survive the recursive call. Everything else,
//! in particular building a [`ViolationKind`], happens in `#[inline(never)]`
//! helpers whose frames are gone before the walk descends. Unoptimized
//! builds give every temporary its own stack slot, so this is what keeps a
//! value nested [`MAX_DEPTH`] deep well inside a 512 KiB stack even there
//! (a test holds it to that).

use serde_json::{Map, Value};

use super::human::describe;
use super::scalar::{self, json_eq};
use super::violation::{Expected, PathSeg, SchemaError, Violation, ViolationKind};
use super::{MAX_DEPTH, MAX_HOPS, Schemas, display_name, union};

/// Where the walk stands: nesting of the value, hops of schema at it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Level {
    depth: usize,
    hops: usize,
}

impl Level {
    /// One more schema applied at the same location.
    pub(super) fn hop(self) -> Self {
        Self {
            depth: self.depth,
            hops: self.hops + 1,
        }
    }

    /// Hops taken so far at this location.
    pub(super) fn hops(self) -> usize {
        self.hops
    }
}

/// One validation run: the document, the path to where it stands, and the
/// violations found so far.
pub(super) struct Walker<'s> {
    pub(super) schemas: &'s Schemas,
    pub(super) path: Vec<PathSeg>,
    pub(super) out: Vec<Violation>,
}

impl<'s> Walker<'s> {
    /// Validates `value` against `schema` from the root of the value.
    pub(super) fn run(schemas: &'s Schemas, schema: &'s Value, value: &Value) -> Vec<Violation> {
        let mut walker = Walker {
            schemas,
            path: Vec::new(),
            out: Vec::new(),
        };
        walker.check(schema, value, Level { depth: 0, hops: 0 }, None);
        walker.out
    }

    /// Records a violation at the current path.
    #[inline(never)]
    pub(super) fn report(&mut self, kind: ViolationKind, input: &Value) {
        let budget = MAX_DEPTH.saturating_sub(self.path.len()) + 1;
        self.out.push(Violation {
            path: self.path.clone(),
            kind,
            input: clone_bounded(input, budget),
        });
    }

    /// Applies one schema to one value. `ref_name` is set when the schema was
    /// reached through a `$ref` (it names enumerations).
    pub(super) fn check(
        &mut self,
        schema: &'s Value,
        value: &Value,
        level: Level,
        ref_name: Option<&'s str>,
    ) {
        let Some(map) = self.enter(schema, value, level) else {
            return;
        };
        if let Some((target, name)) = self.follow_ref(map, value) {
            self.check(target, value, level.hop(), Some(name));
        }
        if self.check_here(map, value, ref_name) {
            return;
        }
        match value {
            Value::Array(items) => self.check_array(map, items, value, level),
            Value::Object(obj) => self.check_object(map, obj, value, level),
            _ => {}
        }
        if has_applicators(map) {
            self.check_applicators(map, value, level);
        }
    }

    /// The schema as an object, or `None` when there is nothing more to do
    /// (a boolean schema, a broken schema, too many hops; reported here).
    #[inline(never)]
    fn enter(
        &mut self,
        schema: &'s Value,
        value: &Value,
        level: Level,
    ) -> Option<&'s Map<String, Value>> {
        if level.hops > MAX_HOPS {
            self.report(
                ViolationKind::Schema(SchemaError::RefCycle { limit: MAX_HOPS }),
                value,
            );
            return None;
        }
        match schema {
            Value::Object(map) => Some(map),
            Value::Bool(true) => None,
            Value::Bool(false) => {
                self.report(ViolationKind::NotAllowed, value);
                None
            }
            other => {
                let found = describe(other).to_owned();
                self.report(
                    ViolationKind::Schema(SchemaError::NotASchema { found }),
                    value,
                );
                None
            }
        }
    }

    /// The target of the schema's `$ref`, if it has one that resolves
    /// (a broken one is reported).
    #[inline(never)]
    fn follow_ref(
        &mut self,
        map: &'s Map<String, Value>,
        value: &Value,
    ) -> Option<(&'s Value, &'s str)> {
        let reference = map.get("$ref")?.as_str()?;
        match self.schemas.resolve_ref(reference) {
            Ok(found) => Some(found),
            Err(e) => {
                self.report(ViolationKind::Schema(e), value);
                None
            }
        }
    }

    /// Everything that needs no recursion: `nullable`, `enum`, `const`,
    /// `type`, string and number keywords. Returns whether the walk stops
    /// here (the value is an accepted null, or of the wrong kind entirely).
    #[inline(never)]
    fn check_here(
        &mut self,
        map: &Map<String, Value>,
        value: &Value,
        ref_name: Option<&str>,
    ) -> bool {
        if value.is_null() && map.get("nullable") == Some(&Value::Bool(true)) {
            return true;
        }
        if let Some(kind) = check_literal(map, value, ref_name) {
            self.report(kind, value);
            return true;
        }
        if let Some(ty) = map.get("type")
            && !map.contains_key("enum")
            && !map.contains_key("const")
            && !scalar::type_matches(ty, value)
        {
            let expected = scalar::expected_for(map, ty);
            self.report(ViolationKind::WrongType { expected }, value);
            return true;
        }
        let kind = match value {
            Value::String(s) => scalar::check_string(self.schemas, map, s),
            Value::Number(n) => scalar::check_number(map, n),
            _ => None,
        };
        if let Some(kind) = kind {
            self.report(kind, value);
        }
        false
    }

    /// `allOf`, `anyOf`/`oneOf` (see [`union`]) and `not`.
    fn check_applicators(&mut self, map: &'s Map<String, Value>, value: &Value, level: Level) {
        if let Some(all) = map.get("allOf").and_then(Value::as_array) {
            for sub in all {
                self.check(sub, value, level.hop(), None);
            }
        }
        if let Some(branches) = map.get("anyOf").and_then(Value::as_array) {
            union::check(self, map, branches, false, value, level);
        }
        if let Some(branches) = map.get("oneOf").and_then(Value::as_array) {
            union::check(self, map, branches, true, value, level);
        }
        if let Some(not) = map.get("not") {
            let found = self.trial(not, value, level.hop());
            if found.is_empty() {
                self.report(ViolationKind::NotAllowed, value);
            }
        }
    }

    /// Applies a schema and returns its violations instead of keeping them
    /// (for union branches and `not`).
    pub(super) fn trial(
        &mut self,
        schema: &'s Value,
        value: &Value,
        level: Level,
    ) -> Vec<Violation> {
        let kept = std::mem::take(&mut self.out);
        self.check(schema, value, level, None);
        std::mem::replace(&mut self.out, kept)
    }

    /// Descends into a member or element whose path segment the caller has
    /// pushed. (Containers refuse to descend past [`MAX_DEPTH`].)
    pub(super) fn child(&mut self, schema: &'s Value, value: &Value, level: Level) {
        let inner = Level {
            depth: level.depth + 1,
            hops: 0,
        };
        self.check(schema, value, inner, None);
    }

    /// Whether a container at this level is too deep to look into; reports
    /// [`ViolationKind::TooDeep`] once, at the container, if so.
    #[inline(never)]
    pub(super) fn too_deep(&mut self, level: Level, empty: bool) -> bool {
        if level.depth < MAX_DEPTH || empty {
            return false;
        }
        self.report(ViolationKind::TooDeep { limit: MAX_DEPTH }, &Value::Null);
        true
    }

    fn check_array(
        &mut self,
        map: &'s Map<String, Value>,
        items: &[Value],
        value: &Value,
        level: Level,
    ) {
        let Some((prefix, rest)) = self.array_shape(map, items.len(), value) else {
            return;
        };
        let descends = !prefix.is_empty() || rest.is_some_and(|r| r != &Value::Bool(true));
        if descends && self.too_deep(level, items.is_empty()) {
            return;
        }
        let before = self.out.len();
        for (i, item) in items.iter().enumerate() {
            if let Some(schema) = prefix.get(i).or(rest) {
                self.path.push(PathSeg::Index(i));
                self.child(schema, item, level);
                self.path.pop();
            }
        }
        // pydantic checks the minimum only once every item is valid.
        if self.out.len() == before {
            self.array_after(map, items, value);
        }
    }

    /// The item schemas (`prefixItems`/`items`, or draft-7 `items` array and
    /// `additionalItems`), or `None` after reporting too many items (pydantic
    /// stops there without looking at the items).
    #[inline(never)]
    fn array_shape(
        &mut self,
        map: &'s Map<String, Value>,
        len: usize,
        value: &Value,
    ) -> Option<(&'s [Value], Option<&'s Value>)> {
        let (prefix, rest): (&'s [Value], Option<&'s Value>) =
            match (map.get("prefixItems"), map.get("items")) {
                (Some(Value::Array(prefix)), rest) => (prefix, rest),
                (_, Some(Value::Array(prefix))) => (prefix, map.get("additionalItems")),
                (_, rest) => (&[], rest),
            };
        let max = match scalar::keyword_u64(map, "maxItems") {
            Some(max) if len as u64 > max => Some(max),
            _ if rest == Some(&Value::Bool(false)) && len > prefix.len() => {
                Some(prefix.len() as u64)
            }
            _ => None,
        };
        if let Some(max) = max {
            self.report(ViolationKind::TooManyItems { max, actual: len }, value);
            return None;
        }
        Some((prefix, rest))
    }

    #[inline(never)]
    fn array_after(&mut self, map: &Map<String, Value>, items: &[Value], value: &Value) {
        let len = items.len();
        if let Some(min) = scalar::keyword_u64(map, "minItems").filter(|m| (len as u64) < *m) {
            self.report(ViolationKind::TooFewItems { min, actual: len }, value);
        }
        if map.get("uniqueItems") == Some(&Value::Bool(true)) {
            let mut seen = std::collections::HashMap::with_capacity(len);
            for (i, item) in items.iter().enumerate() {
                let key = scalar::canonical(item);
                if let Some(&first) = seen.get(&key) {
                    self.path.push(PathSeg::Index(i));
                    self.report(ViolationKind::DuplicateItem { first }, item);
                    self.path.pop();
                } else {
                    seen.insert(key, i);
                }
            }
        }
    }
}

fn has_applicators(map: &Map<String, Value>) -> bool {
    ["allOf", "anyOf", "oneOf", "not"]
        .iter()
        .any(|k| map.contains_key(*k))
}

/// `enum` and `const`. They are checked before `type` and subsume it: a
/// literal of the wrong type is reported as "not one of", like pydantic does.
fn check_literal(
    map: &Map<String, Value>,
    value: &Value,
    ref_name: Option<&str>,
) -> Option<ViolationKind> {
    if let Some(allowed) = map.get("enum").and_then(Value::as_array)
        && !allowed.iter().any(|a| json_eq(a, value))
    {
        return Some(ViolationKind::NotInEnum {
            allowed: allowed.clone(),
            enum_name: ref_name.map(display_name),
        });
    }
    if let Some(expected) = map.get("const")
        && !json_eq(expected, value)
    {
        return Some(ViolationKind::NotConst {
            expected: expected.clone(),
        });
    }
    None
}

/// Copies a value for a violation's `input`, cutting containers nested
/// deeper than `budget` (replaced by `null`) so that neither the copy nor
/// its later drop or serialization can recurse without bound.
pub(super) fn clone_bounded(v: &Value, budget: usize) -> Value {
    match v {
        Value::Array(items) if budget > 0 => {
            Value::Array(items.iter().map(|i| clone_bounded(i, budget - 1)).collect())
        }
        Value::Object(map) if budget > 0 => Value::Object(
            map.iter()
                .map(|(k, i)| (k.clone(), clone_bounded(i, budget - 1)))
                .collect(),
        ),
        Value::Array(_) | Value::Object(_) => Value::Null,
        scalar => scalar.clone(),
    }
}

/// "Expected an object with fields", for a discriminated union given
/// something else.
pub(super) fn model_expected() -> ViolationKind {
    ViolationKind::WrongType {
        expected: Expected::Model,
    }
}

//! YAML text to JSON values that remember where every value came from.
//!
//! [`parse`] reads one source text (one file, possibly several `---` separated documents)
//! into [`Document`]s: a [`serde_json::Value`] and a table of [`NodeSpan`]s, one for every
//! value, addressed by JSON pointer (`/log_streams/0/metric_settings/scorers/1/name`). A
//! span names the value's line, column and byte offset and, for a mapping entry, its key's,
//! so later stages can say `file:line:column` about any path, and point "unknown field" at
//! the key. This is the only module that parses YAML.
//!
//! Parsing is done by `serde-saphyr`, with these choices:
//! - YAML 1.2 core schema: only `true`/`false` (any case) are booleans (`yes`, `on`, `y` are
//!   strings), `null`/`~`/empty are null, quoted scalars are strings. Integers stay JSON
//!   integers, including decimal ones with leading zeros (`012` is 12); integers outside
//!   64 bits and non-finite floats (`.inf`, `.nan`) are errors, as JSON cannot hold them.
//! - Mapping keys must be strings and unique; every such error in the file is reported,
//!   duplicates naming both places.
//! - Anchors, aliases and `<<` merge keys work; tags other than YAML's own are refused.
//! - Hostile input is refused early and in bounded memory: the size is checked before
//!   parsing, and [`Limits`] bound nesting, nodes (counting those that aliases expand to),
//!   aliases, alias expansion and documents. An "alias bomb" stops once its expansion passes
//!   [`Limits::max_alias_expanded_nodes`], long before it can allocate much.
//!
//! Documents that are empty (only comments) or a bare null are skipped.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::{Budget, DuplicateKeyPolicy, Location, NonFiniteFloatPolicy, Options, Spanned};

use super::diagnostic::{LineIndex, Span};

mod document;
mod error;

pub use document::{Document, NodeSpan, escape_token};
pub use error::YamlError;

use document::{Kids, SpanTree};
use error::convert_error;

/// The most nesting [`Limits::max_depth`] can allow, whatever it is set to: the stages
/// after parsing (checking, cloning and dropping values) recurse through the documents on
/// the caller's stack, and deeper structures would need more than a thread is sure to have.
pub const MAX_DEPTH_CEILING: usize = 256;

/// Bounds on what one source text may cost to parse. Each breach is a [`YamlError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest source text, in bytes, checked before parsing starts. Default 8 MiB.
    pub max_file_bytes: usize,
    /// Deepest nesting of mappings and sequences. Default 64, at most [`MAX_DEPTH_CEILING`].
    pub max_depth: usize,
    /// Most nodes (scalars, mappings, sequences) in one file, counting every node an alias
    /// expands to. Default 250,000: the benchmark's whole config repo in one file (2,000 log
    /// streams, 250 experiments, templates; 1 MB) holds about 100,000, and a file stopped at
    /// the bound costs about 35 MB and a third of a second to refuse.
    pub max_nodes: usize,
    /// Most documents in one file. Default 1,000.
    pub max_documents: usize,
    /// Most alias references (`*name`) in one file. Default 10,000.
    pub max_aliases: usize,
    /// Most parser events (a node, or the end of a mapping or sequence) that aliases may
    /// expand to in one file, together. Default 100,000.
    pub max_alias_expanded_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 8 * 1024 * 1024,
            max_depth: 64,
            max_nodes: 250_000,
            max_documents: 1_000,
            max_aliases: 10_000,
            max_alias_expanded_nodes: 100_000,
        }
    }
}

impl Limits {
    fn depth(&self) -> usize {
        self.max_depth.clamp(1, MAX_DEPTH_CEILING)
    }

    fn options(&self) -> Options {
        let depth = self.depth();
        let mut budget = Budget::default();
        budget.max_depth = depth;
        budget.flow_nesting_limit = depth;
        budget.max_nodes = self.max_nodes;
        // Every node is one event, a collection two; documents add four at most.
        budget.max_events = self
            .max_nodes
            .saturating_mul(2)
            .saturating_add(self.max_documents.saturating_mul(4))
            .saturating_add(16);
        budget.max_documents = self.max_documents;
        budget.max_aliases = self.max_aliases;
        budget.max_recorded_anchor_events = self.max_nodes;
        // Aliases can repeat text; allow twice the largest file in all, counting repeats.
        budget.max_total_scalar_bytes = self.max_file_bytes.saturating_mul(2);
        // The explicit alias bounds replace the library's ratio heuristic, which would
        // refuse a harmless file using one anchor a hundred times.
        budget.enforce_alias_anchor_ratio = false;

        let mut options = Options::default();
        options.budget = Some(budget);
        options.alias_limits.max_total_replayed_events = self.max_alias_expanded_nodes;
        options.alias_limits.max_replay_stack_depth = depth;
        options.duplicate_keys = DuplicateKeyPolicy::PassThrough;
        options.strict_booleans = true;
        options.reject_unsupported_tags = true;
        // Non-finite floats reach the flattener, which reports them with the others.
        options.non_finite_float_policy = NonFiniteFloatPolicy::PassThrough;
        options.with_snippet = false;
        options.emit_comments = false;
        options
    }
}

/// Parses `source` (one file's text, without a byte order mark) into its documents.
///
/// Returns every error found: a syntax or limit error stops the parse and comes alone;
/// key errors (duplicates, non-string keys) and out-of-range numbers are all collected.
///
/// The parse runs on the calling thread. Deep (but allowed) nesting cannot overflow its
/// stack, whatever thread it is: each level of nesting first makes sure `STACK_RED_ZONE` (256 KiB)
/// of stack is left and, when it is not, continues on a new `STACK_SEGMENT` allocated
/// for the purpose (`stacker`). Ordinary files never need one, so a parse costs no thread
/// and no stack allocation, and what it allocates stays in the caller's memory arena.
/// A panic of the parser (there should be none) becomes [`YamlError::Internal`].
pub fn parse(source: &str, limits: &Limits) -> Result<Vec<Document>, Vec<YamlError>> {
    if source.len() > limits.max_file_bytes {
        return Err(vec![YamlError::TooLarge {
            size: source.len(),
            limit: limits.max_file_bytes,
        }]);
    }
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse_here(source, limits)))
        .unwrap_or_else(|_| Err(vec![YamlError::Internal("the parser panicked".to_owned())]))
}

/// Stack that must be left before going one level deeper into the YAML (parsing or
/// flattening it): one level takes about 32 KiB in debug builds, far less optimized.
const STACK_RED_ZONE: usize = 256 * 1024;

/// Stack allocated when less than [`STACK_RED_ZONE`] is left: room for dozens of levels.
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f`, on a new stack segment if the current one is nearly used up.
fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
}

fn parse_here(source: &str, limits: &Limits) -> Result<Vec<Document>, Vec<YamlError>> {
    let raw = serde_saphyr::from_multiple_with_options::<Spanned<Raw>>(source, limits.options())
        .map_err(|err| vec![convert_error(&err, source, limits)])?;
    let mut flattener = Flattener {
        lines: LineIndex::new(source),
        errors: Vec::new(),
    };
    let documents = raw
        .into_iter()
        .map(|node| {
            let (value, spans) = flattener.node(node, None);
            Document { value, spans }
        })
        .collect();
    if flattener.errors.is_empty() {
        Ok(documents)
    } else {
        Err(flattener.errors)
    }
}

/// A YAML value as the parser gives it, before keys are checked.
enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<Raw>, Spanned<Raw>)>),
}

impl Raw {
    fn kind(&self) -> &'static str {
        match self {
            Raw::Null => "null",
            Raw::Bool(_) => "a boolean",
            Raw::Int(_) | Raw::UInt(_) => "an integer",
            Raw::Float(_) => "a number",
            Raw::Str(_) => "a string",
            Raw::Seq(_) => "a sequence",
            Raw::Map(_) => "a mapping",
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Every level of nesting passes here: the parser recurses through this call.
        with_stack(|| deserializer.deserialize_any(RawVisitor))
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_none<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Raw, D::Error> {
        Raw::deserialize(deserializer)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::UInt(v))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Raw, E> {
        i64::try_from(v)
            .map(Raw::Int)
            .map_err(|_| E::custom("integer out of range: it does not fit in 64 bits"))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Raw, E> {
        u64::try_from(v)
            .map(Raw::UInt)
            .map_err(|_| E::custom("integer out of range: it does not fit in 64 bits"))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Raw, E> {
        Err(E::custom("binary values are not supported in manifests"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Raw::Map(entries))
    }
}

/// Turns parsed nodes into JSON values and span trees, collecting key and number errors.
struct Flattener<'s> {
    lines: LineIndex<'s>,
    errors: Vec<YamlError>,
}

impl Flattener<'_> {
    fn node(&mut self, node: Spanned<Raw>, key: Option<Span>) -> (Value, SpanTree) {
        with_stack(|| self.node_here(node, key))
    }

    fn node_here(&mut self, node: Spanned<Raw>, key: Option<Span>) -> (Value, SpanTree) {
        let value_span = self.span(&node.referenced);
        let aliased = node.defined != node.referenced;
        let defined_span = if aliased {
            self.span(&node.defined)
        } else {
            value_span
        };
        let mut at = NodeSpan {
            value: value_span,
            key,
            defined: aliased.then_some(defined_span),
        };
        let (value, kids) = match node.value {
            Raw::Null => (Value::Null, Kids::Leaf),
            Raw::Bool(b) => (Value::Bool(b), Kids::Leaf),
            Raw::Int(i) => (Value::from(i), Kids::Leaf),
            Raw::UInt(u) => (Value::from(u), Kids::Leaf),
            Raw::Float(f) => (self.float(f, defined_span), Kids::Leaf),
            Raw::Str(s) => (Value::String(s), Kids::Leaf),
            Raw::Seq(items) => {
                // A list of scalars keeps their spans alone (see `Kids::Scalars`).
                let scalars = items.iter().all(is_plain_scalar);
                let mut values = Vec::with_capacity(items.len());
                let mut kids = Vec::with_capacity(if scalars { 0 } else { items.len() });
                let mut spans = Vec::with_capacity(if scalars { items.len() } else { 0 });
                for item in items {
                    let (value, kid) = self.node(item, None);
                    values.push(value);
                    if scalars {
                        spans.push(kid.at.value);
                    } else {
                        kids.push(kid);
                    }
                }
                let kids = if scalars {
                    Kids::Scalars(spans)
                } else {
                    Kids::Seq(kids)
                };
                (Value::Array(values), kids)
            }
            Raw::Map(entries) => {
                let mut values = Map::new();
                let mut kids: Vec<(String, SpanTree)> = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    let key_span = self.span(&key.referenced);
                    let key = match key.value {
                        Raw::Str(key) => key,
                        other => {
                            self.errors.push(YamlError::NonStringKey {
                                kind: other.kind(),
                                at: key_span,
                            });
                            continue;
                        }
                    };
                    if values.contains_key(&key) {
                        let first = kids
                            .iter()
                            .find(|(k, _)| *k == key)
                            .and_then(|(_, kid)| kid.at.key);
                        self.errors.push(YamlError::DuplicateKey {
                            key,
                            at: key_span,
                            first: first.unwrap_or(key_span),
                        });
                        continue;
                    }
                    let (value, kid) = self.node(value, Some(key_span));
                    values.insert(key.clone(), value);
                    kids.push((key, kid));
                }
                kids.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
                (Value::Object(values), Kids::Map(kids))
            }
        };
        if let Some(len) = self.flow_len(at.value, &kids) {
            at.value.len = len;
        }
        (value, SpanTree { at, kids })
    }

    /// The length of a flow collection (`[...]`, `{...}`) written at `span`, to its
    /// closing bracket: the parser marks only the opening one. `None` for anything else.
    fn flow_len(&self, span: Span, kids: &Kids) -> Option<usize> {
        let source = self.lines.source();
        let close = match source.as_bytes().get(span.offset)? {
            b'[' => b']',
            b'{' => b'}',
            _ => return None,
        };
        let end_of = |s: &Span| s.offset.saturating_add(s.len);
        let last = match kids {
            Kids::Leaf => None,
            Kids::Scalars(spans) => spans.iter().map(end_of).max(),
            Kids::Seq(kids) => kids.iter().map(|k| end_of(&k.at.value)).max(),
            Kids::Map(kids) => kids
                .iter()
                .flat_map(|(_, k)| [Some(end_of(&k.at.value)), k.at.key.as_ref().map(end_of)])
                .flatten()
                .max(),
        };
        // After the last item: blanks, commas, line breaks and comments, then the bracket.
        let mut at = last.unwrap_or(span.offset + 1).max(span.offset + 1);
        let bytes = source.as_bytes();
        while let Some(&b) = bytes.get(at) {
            match b {
                b' ' | b'\t' | b'\r' | b'\n' | b',' => at += 1,
                b'#' => {
                    at += bytes[at..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .unwrap_or(bytes.len() - at)
                }
                _ if b == close => return Some(at + 1 - span.offset),
                _ => return None,
            }
        }
        None
    }

    /// A float as JSON. The parser gives integers it cannot hold as floats; those written as
    /// integers become integers again (`012`) or an error (`99999999999999999999`).
    fn float(&mut self, f: f64, at: Span) -> Value {
        let text = self
            .lines
            .source()
            .get(at.offset..at.offset.saturating_add(at.len))
            .unwrap_or_default();
        match integer_literal(text) {
            Some(Some(number)) => Value::Number(number),
            Some(None) => {
                self.errors.push(YamlError::IntegerOutOfRange {
                    text: text.to_owned(),
                    at,
                });
                Value::Null
            }
            None => match Number::from_f64(f) {
                Some(number) => Value::Number(number),
                None => {
                    self.errors.push(YamlError::NonFiniteNumber {
                        text: text.to_owned(),
                        at: Some(at),
                    });
                    Value::Null
                }
            },
        }
    }

    fn span(&self, location: &Location) -> Span {
        to_span(location, &self.lines).unwrap_or(Span {
            line: 1,
            column: 1,
            offset: 0,
            len: 0,
        })
    }
}

/// Whether `node` is a scalar written where it is (not brought by an alias): its span
/// is all there is to keep of where it is.
fn is_plain_scalar(node: &Spanned<Raw>) -> bool {
    !matches!(node.value, Raw::Seq(_) | Raw::Map(_)) && node.defined == node.referenced
}

/// `Some(Some(n))` for a YAML 1.2 core integer that fits in 64 bits, `Some(None)` for one
/// that does not, `None` for text that is not an integer.
fn integer_literal(text: &str) -> Option<Option<Number>> {
    let (digits, radix) = if let Some(hex) = text.strip_prefix("0x") {
        (hex, 16)
    } else if let Some(octal) = text.strip_prefix("0o") {
        (octal, 8)
    } else {
        (text, 10)
    };
    let unsigned = if radix == 10 {
        digits.strip_prefix(['-', '+']).unwrap_or(digits)
    } else {
        digits
    };
    if unsigned.is_empty() || !unsigned.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if radix == 10 && digits.starts_with('-') {
        return Some(digits.parse::<i64>().ok().map(Number::from));
    }
    Some(u64::from_str_radix(unsigned, radix).ok().map(Number::from))
}

/// A parser location as a [`Span`] of `lines`' source. Line and column are computed from the
/// byte offset when the parser gives one (so they follow [`super::diagnostic::lines`], not
/// the parser's own count, which skips byte order marks the way only YAML does); else byte
/// offsets are computed from the parser's line and column. `None` for an unknown location.
fn to_span(location: &Location, lines: &LineIndex) -> Option<Span> {
    let line = u32::try_from(location.line()).ok().filter(|&l| l > 0)?;
    let column = u32::try_from(location.column()).unwrap_or(u32::MAX).max(1);
    let source = lines.source();
    let span = location.span();
    let bytes = span
        .byte_offset()
        .zip(span.byte_len())
        .and_then(|(offset, len)| {
            let offset = usize::try_from(offset).ok()?;
            let len = usize::try_from(len).ok()?;
            let end = offset.checked_add(len)?;
            (source.is_char_boundary(offset) && source.is_char_boundary(end))
                .then_some((offset, len))
        });
    Some(match bytes {
        Some((offset, len)) => lines.span(offset, len),
        None => {
            let chars = usize::try_from(span.len()).unwrap_or(1);
            lines.span_at(line, column, chars)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals() {
        let int = |t: &str| integer_literal(t).map(|n| n.map(|n| n.to_string()));
        assert_eq!(int("012"), Some(Some("12".into())));
        assert_eq!(int("-7"), Some(Some("-7".into())));
        assert_eq!(int("+7"), Some(Some("7".into())));
        assert_eq!(int("0x1F"), Some(Some("31".into())));
        assert_eq!(int("0o17"), Some(Some("15".into())));
        assert_eq!(int("18446744073709551616"), Some(None));
        assert_eq!(int("-9223372036854775809"), Some(None));
        assert_eq!(int("1.5"), None);
        assert_eq!(int("1e3"), None);
        assert_eq!(int("-"), None);
        assert_eq!(int(""), None);
        assert_eq!(int("0x"), None);
    }

    /// Every shape of the deepest allowed nesting parses on a thread with a small stack:
    /// the parser and the flattener grow the stack when they need to.
    #[test]
    fn deepest_nesting_of_every_shape_fits_a_small_stack() {
        let depth = MAX_DEPTH_CEILING;
        let limits = Limits {
            max_depth: depth,
            ..Limits::default()
        };
        let block_map: String = (0..depth)
            .map(|level| format!("{}a:\n", "  ".repeat(level)))
            .chain([format!("{}end\n", "  ".repeat(depth))])
            .collect();
        let block_seq = format!("{}x\n", "- ".repeat(depth));
        let flow_seq = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let flow_map = format!("{}1{}", "{a: ".repeat(depth), "}".repeat(depth));
        // An anchored deep value, used again by an alias and by a merge key.
        let inner = format!("{}1{}", "[".repeat(depth - 2), "]".repeat(depth - 2));
        let aliased = format!("a: &deep {inner}\nb: *deep\n");
        let merged = format!(
            "base: &base {{x: {}}}\nuse:\n  <<: *base\n",
            &inner[2..inner.len() - 2]
        );
        let sources = [block_map, block_seq, flow_seq, flow_map, aliased, merged];
        let parsed = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                sources
                    .iter()
                    .map(|source| parse(source, &limits).map(|docs| docs.len()))
                    .collect::<Vec<_>>()
            })
            .expect("spawn")
            .join()
            .expect("no stack overflow");
        assert_eq!(parsed, vec![Ok(1); 6]);
    }

    #[test]
    fn limits_are_clamped() {
        let limits = Limits {
            max_depth: 1_000_000,
            ..Limits::default()
        };
        assert_eq!(limits.depth(), MAX_DEPTH_CEILING);
    }
}

//! The parsed form of one YAML document: its JSON value, and the span of every value in it,
//! found by JSON pointer.

use std::borrow::Cow;

use serde_json::Value;

use crate::manifest::diagnostic::Span;

/// Where one value is in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeSpan {
    /// The value itself (for an alias, the `*name` that brought it here).
    pub value: Span,
    /// The key, when the value is the value of a mapping entry.
    pub key: Option<Span>,
    /// Where the value is written, when that is elsewhere: the anchored node an alias
    /// or merge key refers to.
    pub defined: Option<Span>,
}

impl NodeSpan {
    /// The key's span when there is one, else the value's: where to point when the entry
    /// itself is the problem (an unknown field, a duplicate).
    #[must_use]
    pub fn key_or_value(&self) -> Span {
        self.key.unwrap_or(self.value)
    }

    /// A scalar item of a sequence, written where it is.
    fn scalar(value: Span) -> NodeSpan {
        NodeSpan {
            value,
            key: None,
            defined: None,
        }
    }
}

/// A mapping key as a JSON pointer token (`~` → `~0`, `/` → `~1`).
#[must_use]
pub fn escape_token(key: &str) -> Cow<'_, str> {
    if key.contains(['~', '/']) {
        Cow::Owned(key.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(key)
    }
}

/// One YAML document: its value as JSON, and where each part of it is in the source.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The document's value.
    pub value: Value,
    pub(super) spans: SpanTree,
}

impl Document {
    /// Where the whole document is.
    #[must_use]
    pub fn root(&self) -> &NodeSpan {
        &self.spans.at
    }

    /// Where the value at JSON `pointer` is, or `None` if the document has no such value
    /// (or the pointer is malformed: not empty and not starting with `/`).
    #[must_use]
    pub fn span(&self, pointer: &str) -> Option<NodeSpan> {
        let (node, complete) = self.walk(pointer);
        complete.then_some(node)
    }

    /// Where the value at `pointer` is or, when there is none, its nearest ancestor that
    /// exists (at worst the document root): where to point for "missing field" and the like.
    #[must_use]
    pub fn locate(&self, pointer: &str) -> NodeSpan {
        self.walk(pointer).0
    }

    /// Every value's JSON pointer and span, parents before children, in document order.
    #[must_use]
    pub fn spans(&self) -> Vec<(String, NodeSpan)> {
        let mut out = Vec::new();
        let mut stack = vec![(String::new(), &self.spans)];
        while let Some((path, tree)) = stack.pop() {
            out.push((path.clone(), tree.at));
            match &tree.kids {
                Kids::Leaf => {}
                Kids::Scalars(spans) => {
                    out.extend(
                        spans.iter().enumerate().map(|(index, span)| {
                            (format!("{path}/{index}"), NodeSpan::scalar(*span))
                        }),
                    );
                }
                Kids::Seq(kids) => {
                    for (index, kid) in kids.iter().enumerate().rev() {
                        stack.push((format!("{path}/{index}"), kid));
                    }
                }
                Kids::Map(kids) => {
                    let mut kids: Vec<_> = kids.iter().collect();
                    kids.sort_by_key(|(_, kid)| kid.at.key.map(|k| k.offset));
                    for (key, kid) in kids.into_iter().rev() {
                        stack.push((format!("{path}/{}", escape_token(key)), kid));
                    }
                }
            }
        }
        out
    }

    /// Follows `pointer` as far as it goes: the deepest value reached, and whether that is
    /// the end of the pointer.
    fn walk(&self, pointer: &str) -> (NodeSpan, bool) {
        let mut tree = &self.spans;
        if pointer.is_empty() {
            return (tree.at, true);
        }
        let Some(tokens) = pointer.strip_prefix('/') else {
            return (tree.at, false);
        };
        let mut tokens = tokens.split('/').peekable();
        while let Some(token) = tokens.next() {
            let next = match &tree.kids {
                Kids::Map(kids) => {
                    let key = unescape_token(token);
                    kids.binary_search_by(|(k, _)| k.as_str().cmp(&key))
                        .ok()
                        .map(|i| &kids[i].1)
                }
                Kids::Seq(kids) => token.parse::<usize>().ok().and_then(|i| kids.get(i)),
                Kids::Scalars(spans) => {
                    return match token.parse::<usize>().ok().and_then(|i| spans.get(i)) {
                        // A scalar has nothing inside: the pointer ends here or goes nowhere.
                        Some(span) => (NodeSpan::scalar(*span), tokens.peek().is_none()),
                        None => (tree.at, false),
                    };
                }
                Kids::Leaf => None,
            };
            match next {
                Some(next) => tree = next,
                None => return (tree.at, false),
            }
        }
        (tree.at, true)
    }
}

fn unescape_token(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// The spans of a value and of everything in it, shaped like the value.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct SpanTree {
    pub(super) at: NodeSpan,
    pub(super) kids: Kids,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kids {
    Leaf,
    Seq(Vec<SpanTree>),
    /// A sequence of scalars each written where it is (no alias): their spans alone, a
    /// fifth of what a [`SpanTree`] each would take (a list of 250,000 values is 6 MB, not 30).
    Scalars(Vec<Span>),
    /// Sorted by key, each key once: a map of a few entries costs a few entries (a
    /// `BTreeMap` node holds room for eleven, which made span trees of many small mappings
    /// several times larger than the document).
    Map(Vec<(String, SpanTree)>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_and_unescape() {
        assert_eq!(escape_token("a/b~c"), "a~1b~0c");
        assert_eq!(escape_token(""), "");
        assert_eq!(unescape_token("a~1b~0c"), "a/b~c");
        assert_eq!(unescape_token("~01"), "~1");
    }
}

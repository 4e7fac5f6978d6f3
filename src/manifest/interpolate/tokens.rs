//! The `${...}` tokens of one text, numbered so that a reference is found among the
//! occurrences of its own text in time linear in the text, however many references it holds.
//!
//! A reference is located in the source by its text and by how many times that text comes
//! before it ([`super::Reference::nth`]): counting those occurrences for each reference by
//! searching the text before it, and searching the source again for each, was quadratic
//! in the references (measured: docs/performance.md, Memory and time from 2,000 to 20,000
//! log streams). Here every `${` that a `}` closes starts a *token*:
//! the text from that `${` through the first `}` after it. A reference (or a malformed
//! `${...}` one) is always such a token, and a token never overlaps itself, so the
//! occurrences of a token's text before a place are exactly the earlier `${` whose tokens
//! are equal to it. Equal tokens get the same class in one pass from the end: a token
//! with no `${` inside is interned by its text, and one with `${` inside (`${a${b}`) by
//! its text up to the next `${` and the class of the token starting there, which ends at
//! the same `}` — so each byte is hashed once, even in `${${${...}`.

use std::collections::HashMap;

/// How a token is interned: by its text, or by its text before the next `${` and the
/// class of the token that starts there (see the module docs).
#[derive(PartialEq, Eq, Hash)]
enum Key<'t> {
    Leaf(&'t str),
    Node(&'t str, u32),
}

/// The tokens of one text (see the module docs).
pub struct Tokens<'t> {
    /// The byte offset of each `${` that a `}` closes, ascending.
    starts: Vec<usize>,
    /// How many earlier tokens are of the same class.
    ranks: Vec<u32>,
    /// The starts, grouped by class (`first[c]..first[c + 1]`), each group ascending.
    by_class: Vec<usize>,
    /// Where each class's group starts in `by_class` (one more entry than classes).
    first: Vec<usize>,
    interned: HashMap<Key<'t>, u32>,
}

impl<'t> Tokens<'t> {
    /// Finds and classes the tokens of `text`.
    #[must_use]
    pub fn new(text: &'t str) -> Self {
        let bytes = text.as_bytes();
        let opens: Vec<usize> = memchr::memchr_iter(b'$', bytes)
            .filter(|&i| bytes.get(i + 1) == Some(&b'{'))
            .collect();
        let mut interned: HashMap<Key<'t>, u32> = HashMap::new();
        // From the end, so the class of the token a `${` inside one starts is known.
        let mut class_of: Vec<Option<u32>> = vec![None; opens.len()];
        for k in (0..opens.len()).rev() {
            let at = opens[k];
            // The next `${` is at least two bytes on (`{` follows this `$`).
            let next = opens.get(k + 1).copied().unwrap_or(bytes.len());
            let key = match memchr::memchr(b'}', &bytes[at + 2..next]) {
                Some(close) => Key::Leaf(&text[at..at + 2 + close + 1]),
                None => match class_of.get(k + 1).copied().flatten() {
                    Some(inner) => Key::Node(&text[at..next], inner),
                    // Nothing closes it: not a token.
                    None => continue,
                },
            };
            let fresh = u32::try_from(interned.len()).unwrap_or(u32::MAX);
            class_of[k] = Some(*interned.entry(key).or_insert(fresh));
        }
        let mut starts = Vec::with_capacity(opens.len());
        let mut classes = Vec::with_capacity(opens.len());
        let mut ranks = Vec::with_capacity(opens.len());
        let mut counts = vec![0u32; interned.len()];
        for (at, class) in opens.into_iter().zip(class_of) {
            let Some(class) = class else { continue };
            let count = &mut counts[class as usize];
            starts.push(at);
            classes.push(class);
            ranks.push(*count);
            *count += 1;
        }
        let mut first = Vec::with_capacity(counts.len() + 1);
        let mut sum = 0;
        for count in &counts {
            first.push(sum);
            sum += *count as usize;
        }
        first.push(sum);
        let mut by_class = vec![0; starts.len()];
        let mut filled = first.clone();
        for (&at, &class) in starts.iter().zip(&classes) {
            by_class[filled[class as usize]] = at;
            filled[class as usize] += 1;
        }
        Tokens {
            starts,
            ranks,
            by_class,
            first,
            interned,
        }
    }

    /// How many tokens equal to the one starting at byte `start` come before it, or `None`
    /// when no token starts there.
    #[must_use]
    pub fn rank_at(&self, start: usize) -> Option<usize> {
        let k = self.starts.binary_search(&start).ok()?;
        Some(self.ranks[k] as usize)
    }

    /// Where the `nth` (from 0) token equal to `token` starts, or `None` when there are
    /// not that many. `Err(())` when `token` is not shaped as a token (it must start with
    /// `${` and end with its only `}`), so its occurrences cannot be found here.
    pub fn find(&self, token: &str, nth: usize) -> Result<Option<usize>, ()> {
        let Some(class) = self.class_of(token)? else {
            return Ok(None);
        };
        let group = &self.by_class[self.first[class as usize]..self.first[class as usize + 1]];
        Ok(group.get(nth).copied())
    }

    /// The class `token` would have here (`Ok(None)`: no token here equals it).
    fn class_of(&self, token: &str) -> Result<Option<u32>, ()> {
        let bytes = token.as_bytes();
        let shaped = token.starts_with("${")
            && token.len() >= 3
            && memchr::memchr(b'}', bytes) == Some(bytes.len() - 1);
        if !shaped {
            return Err(());
        }
        // The token's own `${`s (each closed by its last byte), read from the last.
        let opens: Vec<usize> = memchr::memchr_iter(b'$', bytes)
            .filter(|&i| bytes.get(i + 1) == Some(&b'{'))
            .collect();
        let mut class = None;
        for (k, &at) in opens.iter().enumerate().rev() {
            let key = match (class, opens.get(k + 1)) {
                (Some(inner), Some(&next)) => Key::Node(&token[at..next], inner),
                _ => Key::Leaf(&token[at..]),
            };
            match self.interned.get(&key) {
                Some(&c) => class = Some(c),
                None => return Ok(None),
            }
        }
        Ok(class)
    }

    /// The number of tokens (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the counting by search found: occurrences of `text` in `haystack[..start]`.
    fn counted(haystack: &str, start: usize, text: &str) -> usize {
        haystack[..start].matches(text).count()
    }

    /// Every token of `s`, as the expansion reads them: `${` through the first `}`.
    fn tokens_by_search(s: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        for (i, _) in s.match_indices("${") {
            if let Some(close) = s[i + 2..].find('}') {
                out.push((i, &s[i..i + 2 + close + 1]));
            }
        }
        out
    }

    #[test]
    fn ranks_and_finds_agree_with_searching_on_hostile_texts() {
        let mut rng = fastrand::Rng::with_seed(22);
        let alphabet = ['$', '{', '}', 'A', 'B', '1', ' ', 'é'];
        for round in 0..3_000 {
            let len = rng.usize(0..40);
            let s: String = (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            // The source spells it with a prefix and the same tokens, or differently.
            let source = if round % 2 == 0 {
                format!("x: \"{s}\"")
            } else {
                (0..len)
                    .map(|_| alphabet[rng.usize(..alphabet.len())])
                    .collect()
            };
            let here = Tokens::new(&s);
            let there = Tokens::new(&source);
            let expected = tokens_by_search(&s);
            assert_eq!(here.len(), expected.len(), "{s:?}");
            for (start, text) in expected {
                let nth = counted(&s, start, text);
                assert_eq!(here.rank_at(start), Some(nth), "{s:?} at {start}");
                let found = source.match_indices(text).nth(nth).map(|(at, _)| at);
                assert_eq!(there.find(text, nth), Ok(found), "{text:?} in {source:?}");
            }
        }
    }

    #[test]
    fn nested_opens_and_texts_that_are_not_tokens() {
        let s = "${${${A}${A}$${A}";
        let t = Tokens::new(s);
        assert_eq!(t.rank_at(0), Some(0));
        assert_eq!(t.rank_at(4), Some(0), "`${{A}}` first");
        assert_eq!(t.rank_at(8), Some(1));
        assert_eq!(t.rank_at(13), Some(2), "inside `$${{`");
        assert_eq!(t.rank_at(12), None, "not a `${{`");
        assert_eq!(t.find("${A}", 2), Ok(Some(13)));
        assert_eq!(t.find("${${A}", 0), Ok(Some(2)));
        assert_eq!(t.find("${B}", 0), Ok(None));
        assert_eq!(t.find("${A", 0), Err(()));
        assert_eq!(t.find("${A}}", 0), Err(()));
        assert_eq!(Tokens::new("${unclosed ${").len(), 0);
    }

    #[test]
    fn a_hundred_thousand_references_take_one_pass() {
        let mut s = String::new();
        for i in 0..100_000 {
            s.push_str(&format!("${{V{}}}-${{R}} ", i % 1000));
        }
        let t = Tokens::new(&s);
        assert_eq!(t.len(), 200_000);
        let last = s.rfind("${R}").unwrap();
        assert_eq!(t.rank_at(last), Some(99_999));
        assert_eq!(t.find("${R}", 99_999), Ok(Some(last)));
        assert_eq!(t.find("${V999}", 99), Ok(Some(s.rfind("${V999}").unwrap())));
    }
}

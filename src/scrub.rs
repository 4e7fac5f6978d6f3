//! The secrets evalctl holds, and the one masking step every output path takes:
//! whatever text leaves the process (stdout, stderr, log lines at every `-v`
//! level, saved plans, exported files, reports) has each occurrence of a held
//! secret replaced by [`MASK`], however the secret got into it (a manifest, an
//! answer of the service echoing a request, a proxy's error page).
//!
//! A process-wide registry holds the values ([`register`]); they enter where evalctl
//! learns them: the client's credentials (API key, password, the HTTP Basic value,
//! access token) and every bearer token it obtains (`/login`), and each value an
//! Integration document takes from the environment (read by the loader to fingerprint
//! it, and by `apply` to send it). Values shorter than [`MIN_SECRET_LEN`] bytes are not
//! registered: masking every `on` or `eu` of a plan would hide what it says, and such
//! a value is no secret. Each value is registered with the forms the renderers give
//! it (JSON string escaping, control characters escaped, markdown escaping, GitHub
//! workflow-command escaping, form encoding), so an escaped copy is masked too.
//!
//! [`mask`] masks a text, [`MaskingWriter`] a stream (a secret split across two
//! writes is masked whole), [`mask_json`] every string of a JSON value.
//! [`server_text`] is how any text the service sent is quoted: secrets masked, control
//! characters escaped ([`escape_controls`], the renderers' rule), cut to
//! [`MAX_SERVER_TEXT`] characters.
//!
//! [`CREDENTIAL_VARIABLES`] are the environment variables of evalctl's own
//! credentials; the manifest loader refuses a reference to them, or to any variable
//! holding one of their values ([`credential_values`]).

mod writer;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

use aho_corasick::AhoCorasick;
use base64::Engine as _;

pub use writer::MaskingWriter;

/// What a masked secret is shown as, everywhere (the manifest loader masks literal
/// secrets in quoted lines with the same text).
pub const MASK: &str = "********";

/// The shortest value registered as a secret, in bytes: a shorter value is not
/// masked (it would mask common words), and is no secret worth the name.
pub const MIN_SECRET_LEN: usize = 4;

/// The most characters of one text from the service (an error's `detail`, a 422
/// field's message or location) quoted in a message or a report; longer texts are
/// cut and end in `…`.
pub const MAX_SERVER_TEXT: usize = 300;

/// The environment variables that hold evalctl's own credentials (the client's
/// `EVALCTL_API_KEY`, `EVALCTL_PASSWORD`, `EVALCTL_ACCESS_TOKEN`): no manifest may
/// refer to them. `EVALCTL_USERNAME` is not one: a user name is no secret.
pub const CREDENTIAL_VARIABLES: [&str; 3] = [
    "EVALCTL_API_KEY",
    "EVALCTL_PASSWORD",
    "EVALCTL_ACCESS_TOKEN",
];

/// The variable holding the user name that goes with `EVALCTL_PASSWORD`.
const USERNAME_VARIABLE: &str = "EVALCTL_USERNAME";

/// The registry: every value held, and the automaton that finds them.
#[derive(Default)]
struct Held {
    values: BTreeSet<String>,
    masker: Option<Arc<Masker>>,
}

/// An automaton finding every registered form of every held secret.
pub(crate) struct Masker {
    automaton: AhoCorasick,
    /// The length of the longest form, in bytes.
    longest: usize,
}

static HELD: RwLock<Held> = RwLock::new(Held {
    values: BTreeSet::new(),
    masker: None,
});

/// Registers `value` as a secret evalctl holds: from now on every output masks it
/// (and its escaped forms). A value shorter than [`MIN_SECRET_LEN`] bytes is ignored.
pub fn register(value: &str) {
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    let forms = forms(value);
    let mut held = HELD.write().unwrap_or_else(|p| p.into_inner());
    let before = held.values.len();
    held.values.extend(forms);
    if held.values.len() == before {
        return;
    }
    // The forms are short strings; an automaton over them always builds. Should it
    // not, the old one is kept: it masks what it did.
    if let Ok(automaton) = AhoCorasick::new(&held.values) {
        let longest = held.values.iter().map(String::len).max().unwrap_or(0);
        held.masker = Some(Arc::new(Masker { automaton, longest }));
    }
}

/// Registers the credentials evalctl was given in the environment (read through
/// `env`): the values of [`credential_values`].
pub fn register_credentials(env: &dyn Fn(&str) -> Option<String>) {
    for (_, value) in credential_values(env) {
        register(&value);
    }
}

/// The credential values evalctl holds from the environment, each with the variable
/// it comes from: the value of each of [`CREDENTIAL_VARIABLES`] that is set and not
/// blank, and with a user name, the HTTP Basic value of the user and the password
/// (`base64(user:password)`, under `EVALCTL_PASSWORD`). Values shorter than
/// [`MIN_SECRET_LEN`] are left out, as [`register`] leaves them out.
pub fn credential_values(env: &dyn Fn(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let mut out: Vec<(&'static str, String)> = CREDENTIAL_VARIABLES
        .iter()
        .filter_map(|name| get(name).map(|value| (*name, value)))
        .collect();
    if let (Some(user), Some(password)) = (get(USERNAME_VARIABLE), get(CREDENTIAL_VARIABLES[1])) {
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        out.push((CREDENTIAL_VARIABLES[1], basic));
    }
    out.retain(|(_, value)| value.len() >= MIN_SECRET_LEN);
    out
}

/// The current automaton, or `None` while no secret is held.
pub(crate) fn masker() -> Option<Arc<Masker>> {
    HELD.read()
        .unwrap_or_else(|p| p.into_inner())
        .masker
        .clone()
}

/// `text` with every occurrence of a held secret replaced by [`MASK`]; borrowed
/// when there is none.
#[must_use]
pub fn mask(text: &str) -> Cow<'_, str> {
    let Some(masker) = masker() else {
        return Cow::Borrowed(text);
    };
    let ranges = masker.ranges(text.as_bytes(), text.len());
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in ranges {
        // Forms are whole UTF-8 strings, so a match starts and ends at a character
        // boundary; `get` keeps this from panicking all the same.
        out.push_str(text.get(at..start).unwrap_or_default());
        out.push_str(MASK);
        at = end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
    Cow::Owned(out)
}

/// The byte ranges of `text` that [`mask`] masks (overlapping occurrences merged),
/// in order.
#[must_use]
pub fn occurrences(text: &str) -> Vec<(usize, usize)> {
    match masker() {
        Some(masker) => masker.ranges(text.as_bytes(), text.len()),
        None => Vec::new(),
    }
}

/// Masks, in place, every string and every key of `value`, at any depth.
pub fn mask_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    if masker().is_none() {
        return;
    }
    match value {
        Value::String(s) => {
            if let Cow::Owned(masked) = mask(s) {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_json),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut child) in entries {
                mask_json(&mut child);
                map.insert(mask(&key).into_owned(), child);
            }
        }
        _ => {}
    }
}

impl Masker {
    /// The byte ranges to mask in `bytes`: every occurrence of a form that starts
    /// before `before` (overlapping ones merged), in order.
    pub(crate) fn ranges(&self, bytes: &[u8], before: usize) -> Vec<(usize, usize)> {
        let mut found: Vec<(usize, usize)> = self
            .automaton
            .find_overlapping_iter(bytes)
            .filter(|m| m.start() < before)
            .map(|m| (m.start(), m.end()))
            .collect();
        found.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(found.len());
        for (start, end) in found {
            match merged.last_mut() {
                Some(last) if start < last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        merged
    }

    /// The length of the longest form, in bytes.
    pub(crate) fn longest(&self) -> usize {
        self.longest
    }
}

/// Text from outside (names, reasons, details) made safe for one line of a
/// terminal: control characters (escape sequences, carriage returns, tabs,
/// line breaks, NUL) and bidirectional overrides and isolates are written as
/// `\u{..}`. The rule every renderer follows.
#[must_use]
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// Whether a terminal must not be given `c` as is: a control character, or a
/// bidirectional override or isolate.
fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Appends `c`, escaped (`\u{1b}`) when it is unsafe; returns the characters appended.
fn push_escaped(out: &mut String, c: char) -> usize {
    if is_unsafe(c) {
        let escape = format!("\\u{{{:x}}}", u32::from(c));
        out.push_str(&escape);
        escape.len()
    } else {
        out.push(c);
        1
    }
}

/// A text the service sent, as evalctl quotes it: held secrets masked (before it is
/// cut, so no part of one shows), control characters escaped, at most
/// [`MAX_SERVER_TEXT`] characters (then `…`; an escape is never cut in two).
#[must_use]
pub fn server_text(text: &str) -> String {
    let masked = mask(text);
    let mut out = String::with_capacity(masked.len().min(MAX_SERVER_TEXT * 4));
    let mut shown = 0;
    for c in masked.chars() {
        let before = out.len();
        shown += push_escaped(&mut out, c);
        if shown > MAX_SERVER_TEXT {
            out.truncate(before);
            out.push('…');
            break;
        }
    }
    out
}

/// The forms of `value` an output may hold: as is, and as each renderer escapes it.
fn forms(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    // JSON (`-o json`, saved plans, log lines of bodies).
    if let Ok(json) = serde_json::to_string(value) {
        out.push(json[1..json.len() - 1].to_owned());
    }
    // Text and markdown escape control characters.
    out.push(escape_controls(value).into_owned());
    // Markdown backslash-escapes its specials (an underscore inside a word stays).
    let specials = |c: char| {
        matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '#' | '!'
        )
    };
    for underscores in [true, false] {
        let mut md = String::with_capacity(value.len() + 8);
        for c in value.chars() {
            if specials(c) && (underscores || c != '_') {
                md.push('\\');
            }
            md.push(c);
        }
        out.push(md);
    }
    // GitHub workflow commands.
    let mut github = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '%' => github.push_str("%25"),
            '\r' => github.push_str("%0D"),
            '\n' => github.push_str("%0A"),
            c => github.push(c),
        }
    }
    out.push(github);
    // A form body (the login form, echoed by a server).
    let mut form = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                form.push(char::from(b));
            }
            b' ' => form.push('+'),
            b => form.push_str(&format!("%{b:02X}")),
        }
    }
    out.push(form);
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests;

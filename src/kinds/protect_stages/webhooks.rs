//! Subscription URLs taken from the environment (`url: ${SLACK_WEBHOOK}`).
//! A webhook URL is its own credential, so it is kept as the manifest
//! writes it, as an Integration's values are: the loader keeps the text and
//! only a fingerprint of the value ([`crate::manifest::interpolate`]);
//! plans, saved plans and exports show and hold the text; the local record
//! holds the text with the fingerprint of the value sent; and `apply`
//! expands it at the last moment, for the request alone, the value
//! registered as held so that no output shows it
//! ([`crate::scrub::register`]).
//!
//! Rulesets compare in the record's form: a URL from the environment with
//! [`FINGERPRINT_KEY`] beside it. A declared URL whose variable is not set
//! has no fingerprint, and compares by its text alone.

use serde_json::{Map, Value};

use crate::api::fingerprint::fingerprint;
use crate::manifest::interpolate::expand;
use crate::manifest::types::{EnvField, EnvFields};
use crate::reconcile::apply::secrets::MissingSecret;

use super::spec::ProtectStageSpec;

/// The key beside a subscription's `url` that holds the fingerprint of its
/// value, in the record and in the compared form (never sent).
pub const FINGERPRINT_KEY: &str = "url_fingerprint";

/// Each subscription of wire rulesets, mutably.
fn subscriptions_mut(rulesets: &mut [Value]) -> impl Iterator<Item = &mut Map<String, Value>> {
    rulesets.iter_mut().flat_map(|ruleset| {
        ruleset
            .pointer_mut("/action/subscriptions")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
    })
}

/// Gives the loader's fingerprints to the subscriptions of a Project's
/// stages: `env` holds the strings the loader kept as written, by JSON
/// pointer in the document.
pub fn attach(stages: &mut [ProtectStageSpec], env: &EnvFields) {
    for (i, stage) in stages.iter_mut().enumerate() {
        for (j, ruleset) in stage.prioritized_rulesets.iter_mut().flatten().enumerate() {
            for (k, subscription) in ruleset.action.subscriptions_mut().iter_mut().enumerate() {
                let pointer = format!(
                    "/protect_stages/{i}/prioritized_rulesets/{j}/action/subscriptions/{k}/url"
                );
                if let Some(EnvField::FromEnv { fingerprint }) = env.get(&pointer) {
                    subscription.url_fingerprint.clone_from(fingerprint);
                }
            }
        }
    }
}

/// The declared rulesets in the compared form: the wire's, each URL from
/// the environment whose value is known with its fingerprint beside it.
pub fn compared(spec: &ProtectStageSpec) -> Option<Vec<Value>> {
    let mut wire = spec.wire_rulesets()?;
    let declared = spec
        .prioritized_rulesets
        .iter()
        .flatten()
        .flat_map(|r| r.action.subscriptions());
    for (slot, subscription) in subscriptions_mut(&mut wire).zip(declared) {
        if let Some(f) = &subscription.url_fingerprint {
            slot.insert(FINGERPRINT_KEY.to_owned(), Value::String(f.clone()));
        }
    }
    Some(wire)
}

/// Live (recorded) rulesets as they compare with `declared`: a fingerprint
/// the declared subscription in the same place does not have (a literal
/// URL, or a variable not set) is left out.
pub fn aligned(live: &[Value], declared: &[Value]) -> Vec<Value> {
    let mut live = live.to_vec();
    let mut declared = declared.to_vec();
    let has: Vec<bool> = subscriptions_mut(&mut declared)
        .map(|s| s.contains_key(FINGERPRINT_KEY))
        .collect();
    for (i, slot) in subscriptions_mut(&mut live).enumerate() {
        if !has.get(i).copied().unwrap_or(false) {
            slot.remove(FINGERPRINT_KEY);
        }
    }
    live
}

/// Rulesets without the fingerprints (what a manifest or the service reads).
pub fn without_fingerprints(rulesets: &[Value]) -> Vec<Value> {
    let mut out = rulesets.to_vec();
    for slot in subscriptions_mut(&mut out) {
        slot.remove(FINGERPRINT_KEY);
    }
    out
}

/// The variables the URLs of `rulesets` refer to (what `apply` checks are
/// set before any write).
pub fn variables(rulesets: &[Value]) -> Vec<String> {
    let mut rulesets = rulesets.to_vec();
    let mut names: Vec<String> = subscriptions_mut(&mut rulesets)
        .filter_map(|s| s.get("url").and_then(Value::as_str).map(str::to_owned))
        .filter(|url| url.contains("${"))
        .flat_map(|url| expand(&url, &|_| Some(String::new())).references)
        .map(|(name, _)| name)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What `apply` sends and what it records, from the rulesets a plan holds:
/// each URL that refers to the environment expanded through `env` (and its
/// value registered as held) in the first, kept as written with its
/// value's fingerprint in the second.
pub fn for_sending(
    rulesets: &[Value],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Vec<Value>, Vec<Value>), MissingSecret> {
    let mut sent = without_fingerprints(rulesets);
    let mut recorded = sent.clone();
    for (sent, recorded) in subscriptions_mut(&mut sent).zip(subscriptions_mut(&mut recorded)) {
        let Some(url) = sent.get("url").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        if !url.contains("${") {
            continue;
        }
        let expansion = expand(&url, &|name| env(name).filter(|v| !v.is_empty()));
        if let Some((name, _)) = expansion
            .references
            .iter()
            .find(|(name, _)| env(name).is_none_or(|v| v.is_empty()))
        {
            return Err(MissingSecret { name: name.clone() });
        }
        if !expansion.references.is_empty() {
            crate::scrub::register(&expansion.text);
        }
        let value = Value::String(expansion.text);
        recorded.insert(
            FINGERPRINT_KEY.to_owned(),
            Value::String(fingerprint(Some(&value))),
        );
        sent.insert("url".to_owned(), value);
    }
    Ok((sent, recorded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rulesets(url: &str) -> Vec<Value> {
        vec![json!({
            "rules": [{"metric": "toxicity", "operator": "gt", "target_value": 0.5}],
            "action": {"type": "PASSTHROUGH", "subscriptions": [{"url": url}]},
        })]
    }

    #[test]
    fn a_url_from_the_environment_is_sent_expanded_and_recorded_as_written() {
        let env = |name: &str| {
            (name == "HOOK").then(|| "https://hooks.example.com/T0/secret-part".to_owned())
        };
        let (sent, recorded) = for_sending(&rulesets("${HOOK}"), &env).expect("set");
        assert_eq!(
            sent[0]["action"]["subscriptions"][0]["url"],
            "https://hooks.example.com/T0/secret-part"
        );
        assert!(
            sent[0]["action"]["subscriptions"][0]
                .get(FINGERPRINT_KEY)
                .is_none()
        );
        let kept = &recorded[0]["action"]["subscriptions"][0];
        assert_eq!(kept["url"], "${HOOK}");
        assert_eq!(
            kept[FINGERPRINT_KEY],
            fingerprint(Some(&json!("https://hooks.example.com/T0/secret-part")))
        );
        assert_eq!(variables(&recorded), ["HOOK"]);
        let missing = for_sending(&rulesets("${HOOK}"), &|_| None).expect_err("unset");
        assert_eq!(missing.name, "HOOK");
        // A literal URL is sent and recorded as it is.
        let (sent, recorded) =
            for_sending(&rulesets("https://a.example/x"), &|_| None).expect("literal");
        assert_eq!(sent, recorded);
        assert_eq!(sent, rulesets("https://a.example/x"));
    }

    #[test]
    fn a_fingerprint_compares_only_where_the_declared_url_has_one() {
        let mut with = rulesets("${HOOK}");
        with[0]["action"]["subscriptions"][0][FINGERPRINT_KEY] = json!("f1");
        let plain = rulesets("${HOOK}");
        // Declared without (the variable is not set): the record's is left out.
        assert_eq!(aligned(&with, &plain), plain);
        // Declared with: kept, and a different value differs.
        assert_eq!(aligned(&with, &with), with);
        assert_eq!(without_fingerprints(&with), plain);
    }
}

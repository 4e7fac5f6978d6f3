//! The registry is process-wide: each test registers values of its own, unlike
//! anything another test prints.

#![allow(clippy::unwrap_used)] // tests: a failing unwrap is a failing test

use std::io::Write;

use super::*;

#[test]
fn short_values_are_not_registered_and_long_ones_are_masked_everywhere() {
    register("xq1");
    assert_eq!(mask("a xq1 b"), "a xq1 b");
    register("scrub-test-one-1");
    assert_eq!(
        mask("key=scrub-test-one-1, again scrub-test-one-1."),
        "key=********, again ********."
    );
    // Nothing to mask: the text is borrowed.
    assert!(matches!(mask("nothing here"), Cow::Borrowed(_)));
}

#[test]
fn escaped_forms_are_masked_too() {
    let secret = "scrub\"two!_%2 x\u{1b}";
    register(secret);
    let json = serde_json::to_string(&serde_json::json!({ "k": secret })).unwrap();
    assert_eq!(mask(&json), r#"{"k":"********"}"#);
    assert_eq!(mask(&escape_controls(secret)), MASK);
    assert_eq!(mask("scrub\"two\\!\\_%2 x\u{1b}"), MASK);
    assert_eq!(mask("scrub\"two!_%252 x\u{1b}"), MASK);
    assert_eq!(mask("scrub%22two%21_%252+x%1B"), MASK);
}

#[test]
fn overlapping_secrets_are_masked_as_one() {
    register("scrub-abc-XYZ3");
    register("XYZ3-def-scrub");
    assert_eq!(mask("<scrub-abc-XYZ3-def-scrub>"), "<********>");
}

#[test]
fn json_strings_and_keys_are_masked() {
    register("scrub-json-key-4");
    let mut v = serde_json::json!({
        "detail": "echo: scrub-json-key-4",
        "scrub-json-key-4": [1, "x scrub-json-key-4"],
    });
    mask_json(&mut v);
    assert_eq!(
        v,
        serde_json::json!({ "detail": "echo: ********", "********": [1, "x ********"] })
    );
}

#[test]
fn a_secret_split_across_writes_is_masked_whole() {
    let secret = "scrub-split-secret-5";
    register(secret);
    let text = format!("head {secret} middle {secret}{secret} tail");
    let expected = format!("head {MASK} middle {MASK}{MASK} tail");
    // Every split point of two writes, then one byte at a time.
    for split in 0..=text.len() {
        let mut w = MaskingWriter::new(Vec::new());
        w.write_all(&text.as_bytes()[..split]).unwrap();
        w.flush().unwrap();
        w.write_all(&text.as_bytes()[split..]).unwrap();
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(out, expected, "split at {split}");
    }
    let mut w = MaskingWriter::new(Vec::new());
    for b in text.as_bytes() {
        w.write_all(std::slice::from_ref(b)).unwrap();
        w.flush().unwrap();
    }
    assert_eq!(String::from_utf8(w.finish().unwrap()).unwrap(), expected);
    // Dropping the writer writes what it held.
    let mut sink = Vec::new();
    {
        let mut w = MaskingWriter::new(&mut sink);
        w.write_all(format!("x {secret}").as_bytes()).unwrap();
    }
    assert_eq!(String::from_utf8(sink).unwrap(), format!("x {MASK}"));
}

#[test]
fn a_large_stream_is_masked_across_scans() {
    let secret = "scrub-large-stream-6";
    register(secret);
    let mut text = String::new();
    for i in 0..5000 {
        text.push_str(&format!("line {i} {secret}\n"));
    }
    let mut w = MaskingWriter::new(Vec::new());
    for chunk in text.as_bytes().chunks(7) {
        w.write_all(chunk).unwrap();
    }
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert!(!out.contains(secret));
    assert_eq!(out.matches(MASK).count(), 5000);
    assert_eq!(out, text.replace(secret, MASK));
}

#[test]
fn server_text_is_masked_before_it_is_cut_and_escaped() {
    let secret = "scrub-server-text-7";
    register(secret);
    // The secret straddles the cut: no part of it shows.
    let text = format!("{}{secret}", "a".repeat(MAX_SERVER_TEXT - 5));
    let quoted = server_text(&text);
    assert!(!quoted.contains("scrub"), "{quoted}");
    assert!(quoted.ends_with('…'), "{quoted}");
    assert!(quoted.chars().count() <= MAX_SERVER_TEXT + 1);
    assert_eq!(
        server_text("bell\u{7} esc\u{1b}[31m nul\u{0} nl\n"),
        "bell\\u{7} esc\\u{1b}[31m nul\\u{0} nl\\u{a}"
    );
    // An escape is not cut in two.
    let text = format!("{}\u{1b}", "b".repeat(MAX_SERVER_TEXT - 2));
    let quoted = server_text(&text);
    assert_eq!(quoted, format!("{}…", "b".repeat(MAX_SERVER_TEXT - 2)));
}

#[test]
fn credential_values_are_read_from_the_credential_variables() {
    let env = |name: &str| match name {
        "EVALCTL_API_KEY" => Some("scrub-key-8".to_owned()),
        "EVALCTL_USERNAME" => Some("me@example.com".to_owned()),
        "EVALCTL_PASSWORD" => Some("scrub-pw-8".to_owned()),
        "EVALCTL_ACCESS_TOKEN" => Some("  ".to_owned()),
        _ => None,
    };
    let values = credential_values(&env);
    let basic = base64::engine::general_purpose::STANDARD.encode("me@example.com:scrub-pw-8");
    assert_eq!(
        values,
        vec![
            ("EVALCTL_API_KEY", "scrub-key-8".to_owned()),
            ("EVALCTL_PASSWORD", "scrub-pw-8".to_owned()),
            ("EVALCTL_PASSWORD", basic.clone()),
        ]
    );
    register_credentials(&env);
    assert_eq!(mask(&format!("Basic {basic}")), format!("Basic {MASK}"));
}

#[test]
fn the_credential_variables_are_the_clients() {
    use crate::client::config::{ENV_ACCESS_TOKEN, ENV_API_KEY, ENV_PASSWORD, ENV_USERNAME};
    assert_eq!(
        CREDENTIAL_VARIABLES,
        [ENV_API_KEY, ENV_PASSWORD, ENV_ACCESS_TOKEN]
    );
    assert_eq!(USERNAME_VARIABLE, ENV_USERNAME);
}

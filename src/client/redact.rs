//! Redaction of bodies before they reach a TRACE log line: every value under a
//! secret key ([`crate::api::secret::is_secret_key`]: the integration fields,
//! passwords and tokens) is replaced at any depth, every secret evalctl holds is
//! masked in every other string and key ([`crate::scrub::mask_json`]: an answer
//! echoing the request's headers), before the text is cut to a bounded length.
//! A body that is not JSON is not logged at all (it could be a form with a
//! password).

use serde_json::Value;

use crate::api::secret::redact_value;

/// The longest body text a log line carries.
const MAX_LOGGED: usize = 2048;

/// A loggable rendering of a body: redacted JSON cut to a bounded length, or
/// a placeholder for a body that is not JSON.
pub fn loggable_body(body: &[u8]) -> String {
    if body.is_empty() {
        return String::new();
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(mut v) => {
            redact_value(&mut v);
            crate::scrub::mask_json(&mut v);
            let mut text = v.to_string();
            if text.len() > MAX_LOGGED {
                let mut cut = MAX_LOGGED;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push('…');
            }
            text
        }
        Err(_) => format!("[{} bytes, not JSON, not logged]", body.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_at_any_depth() {
        let body = br#"{"token":"t1","gcs_config":{"service_account_credentials":"c1","bucket_name":"b"},
            "headers":{"X":"h1"},"list":[{"api_key_value":"k1","Password":"p1"}],"access_token":"a1"}"#;
        let out = loggable_body(body);
        for secret in ["t1", "c1", "h1", "k1", "p1", "a1"] {
            assert!(!out.contains(&format!("\"{secret}\"")), "{out}");
        }
        assert!(out.contains("\"bucket_name\":\"b\""), "{out}");
    }

    #[test]
    fn non_json_is_not_logged_and_long_json_is_cut() {
        let out = loggable_body(b"username=a&password=hunter2");
        assert!(!out.contains("hunter2"), "{out}");
        let long = serde_json::to_vec(&vec!["é"; 3000]).unwrap();
        assert!(loggable_body(&long).chars().count() <= MAX_LOGGED + 1);
        assert_eq!(loggable_body(b""), "");
    }
}

//! The stable fingerprint of a JSON value, below everything that compares one:
//! the manifest loader fingerprints the integration values it takes from the
//! environment, the planner fingerprints live objects for saved plans, and both
//! must agree byte for byte.

use serde_json::Value;

/// A stable fingerprint of a value: FNV-1a (64 bit) of its canonical JSON,
/// as 16 hex digits; `absent` when there is no object.
///
/// Canonical: serde_json writes struct fields in declaration order and maps
/// from `BTreeMap`s in key order, so equal objects give equal text.
pub fn fingerprint(value: Option<&Value>) -> String {
    match value {
        None => "absent".to_owned(),
        Some(v) => {
            let text = v.to_string();
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for byte in text.as_bytes() {
                hash ^= u64::from(*byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            format!("{hash:016x}")
        }
    }
}

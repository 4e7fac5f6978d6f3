//! What the property tests share: generators of hostile HTTP requests and
//! the raw HTTP/1.1 they are sent with (`property_sandbox`), and generators
//! of random desired and live states (`property_reconcile`), plus the case
//! count every property starts from.

#![allow(dead_code)] // each property test uses a different part

pub mod desired;
pub mod live_ops;
pub mod requests;
pub mod wire;

/// Cases per property: `default`, unless `PROPTEST_CASES` says otherwise.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

//! What the property tests share: generators of hostile HTTP requests and
//! the raw HTTP/1.1 they are sent with (`property_sandbox`), and generators
//! of random desired and live states (`property_reconcile`), plus the
//! configuration (case count and seed) every property starts from.

pub mod desired;
pub mod live_ops;
pub mod requests;
pub mod wire;

/// The seed every property starts from unless `PROPTEST_RNG_SEED` names another.
pub const SEED: u64 = 0x0e7a_1c71;

/// The configuration every property starts from: `default_cases` cases unless
/// `PROPTEST_CASES` says otherwise, from [`SEED`] unless `PROPTEST_RNG_SEED` names another
/// seed. A fixed seed makes `cargo test` (and CI) run the same cases every time, so a
/// failure reproduces and a pass means the same thing twice; explore further with, e.g.,
/// `PROPTEST_RNG_SEED=$RANDOM PROPTEST_CASES=5000 cargo test --test it property_manifest`.
pub fn config(default_cases: u32) -> proptest::test_runner::Config {
    // The default reads every `PROPTEST_*` variable that is set.
    let mut config = proptest::test_runner::Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default_cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(SEED);
    }
    config
}

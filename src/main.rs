//! The `evalctl` binary.
fn main() {}

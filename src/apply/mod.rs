//! Applying a plan: ordered, bounded, re-reads to confirm.

pub mod report;

pub use report::*;

//! Applying a plan: ordered, bounded, re-reads to confirm.
//!
//! - [`engine`]: executes a plan stage by stage and confirms convergence;
//!   checks that a saved plan's objects did not move.
//! - [`reread`]: reads planned objects again, normalized like the plan: each
//!   read once, shared by the objects it covers, 256 distinct reads at a time.
//! - [`secrets`]: resolves `${ENV}` references of integration secrets at the last moment.
//! - [`report`]: what an apply did.

pub mod engine;
pub mod report;
pub mod reread;
pub mod secrets;

pub use engine::{ApplyOptions, Moved, apply, check_unchanged};
pub use report::*;

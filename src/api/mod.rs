//! Wire types of the service: every resource, request, response and
//! enumeration of the spec, with the spec's field names.
//!
//! Conventions:
//! - Responses accept unknown fields (the live service grows) and unknown
//!   enumeration values (kept verbatim, see [`enums`]).
//! - Requests serialize only what is set (`Option` fields are skipped when `None`).
//! - Secrets are [`secret::Secret`], which never prints itself.
//!
//! One module per resource kind.

pub mod common;
pub mod compact;
pub mod enums;
pub mod fingerprint;
pub mod integrations;
pub mod log_streams;
pub mod login;
pub mod metric_settings;
pub mod projects;
pub mod reference;
pub mod scorers;
pub mod secret;
pub mod trends;
pub mod users;

pub use common::*;
pub use compact::{Compact, Shaped, SharedTexts};
pub use enums::*;
pub use integrations::*;
pub use log_streams::*;
pub use login::*;
pub use metric_settings::*;
pub use projects::*;
pub use scorers::*;
pub use secret::Secret;
pub use trends::*;
pub use users::*;

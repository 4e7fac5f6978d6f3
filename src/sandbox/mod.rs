//! The sandbox: a faithful local implementation of the service, for tests
//! (the real client against it), for newcomers (`evalctl sandbox`, no
//! account needed) and for CI checks of config repos offline.
//!
//! Faithful means the same paths, the same shapes (every response validates
//! against the matching schema of the OpenAPI reference), the same
//! validation (422 bodies as FastAPI/pydantic write them) and the same
//! authentication rules as the spec's table.
//!
//! Module map:
//! - [`server`]: starting it ([`Sandbox::builder`]), in-process
//!   ([`SandboxHandle`]) or in the caller's runtime.
//! - `routes`: the HTTP surface, one module per resource.
//! - [`auth`]: the three schemes, the operations without Basic, roles.
//! - [`validation`]: requests against the reference, the 422 bodies.
//! - [`store`]: the state and its semantics, one module per resource.
//! - [`kinds`]: the kinds added for issue 20 (custom scorers, prompt
//!   templates, project writes, Protect stages), store and routes together.
//! - [`fixture`]: the built-in demo fixture and the scaled one.
//! - [`persist`]: the `--state` file: a SQLite database, one table per
//!   collection, each write committed and flushed before it is answered.
//! - [`faults`]: latency, 5xx, 429, rate limit, dropped connections; the
//!   request log.
//! - [`serve`]: `evalctl sandbox`: serve until Ctrl-C.

mod app;
pub mod auth;
mod conn;
pub mod error;
pub mod faults;
pub mod fingerprint;
pub mod fixture;
pub mod kinds;
pub mod persist;
pub mod reply;
mod routes;
pub mod serve;
pub mod server;
pub mod store;
pub mod validation;

pub use error::SandboxError;
pub use faults::{Fault, Faults, RequestRecord};
pub use fixture::{Fixture, Scale};
pub use serve::{ServeOptions, run};
pub use server::{Bound, Sandbox, SandboxBuilder, SandboxHandle};
pub use store::State;

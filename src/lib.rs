//! evalctl: a declarative, GitOps-style configuration reconciler for the
//! evaluation-and-observability service, and a faithful local sandbox of it.
//!
//! The flow runs one way:
//!
//! ```text
//! manifests (YAML) --manifest::load--> Desired
//! service (HTTP)   --live::fetch-----> Live      (normalized)
//! plan::plan(&Desired, &Live) -> Plan            (pure, no I/O)
//! render::render(&Plan, format)                  (text | json | markdown)
//! apply::apply(&Plan, &Client) -> ApplyReport    (ordered, bounded, re-reads to confirm)
//! ```
//!
//! Module map:
//! - [`api`]: wire types of the service (serde), one module per resource kind.
//! - [`client`]: the HTTP client: auth, retries, pagination, typed errors.
//! - [`sandbox`]: the local implementation of the service (axum).
//! - [`schemacheck`]: a small JSON Schema interpreter that reports every violation
//!   with its path; the sandbox renders them as the service's 422 body, the
//!   manifest loader as `file:line:column` diagnostics.
//! - [`manifest`]: desired state: manifest types, YAML loading, validation.
//! - [`plan`], [`render`], [`apply`], [`live`]: the reconciler.
//! - [`cli`], [`commands`], [`exit`], [`output`]: the command line.

pub mod api;
pub mod apply;
pub mod client;
pub mod exit;
pub mod live;
pub mod logging;
pub mod manifest;
pub mod output;
pub mod plan;
pub mod render;
pub mod sandbox;
pub mod schemacheck;

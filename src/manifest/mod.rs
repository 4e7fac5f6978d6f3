//! Desired state: the manifest types users write, and loading them from YAML.
//!
//! - [`types`]: the manifest format (serde + schemars).
//! - [`set`]: a loaded set of documents, the input of `plan`.
//! - [`files`]: finding and reading manifest files, deterministically.
//! - [`yaml`]: parsing YAML into JSON values with a span for every path, under budgets.
//! - [`diagnostic`]: `file:line:column` diagnostics and their rendering.

pub mod diagnostic;
pub mod files;
pub mod set;
pub mod types;
pub mod yaml;

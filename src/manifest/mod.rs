//! Desired state: the manifest types users write, and loading them from YAML.
//!
//! - [`types`]: the manifest format (serde + schemars).
//! - [`set`]: a loaded set of documents, the input of `plan`.

pub mod set;
pub mod types;

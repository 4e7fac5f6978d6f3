//! Desired state: the manifest types users write, and loading them from YAML.
//!
//! - [`types`]: the manifest format (serde + schemars); [`pricing`]: `kind: Pricing`.
//! - [`set`]: a loaded set of documents, the input of `plan`.
//! - [`shared`]: equal run declarations of a set held once.
//! - [`files`]: finding and reading manifest files, deterministically.
//! - [`yaml`]: parsing YAML into JSON values with a span for every path, under budgets.
//! - [`diagnostic`]: `file:line:column` diagnostics and their rendering.
//! - [`load`](mod@load): files to a validated [`set::ManifestSet`] and every diagnostic, through
//!   [`check`] (one document), [`interpolate`] (`${VAR}` and secrets), [`schema`] (the
//!   generated JSON Schema, with the service's [`limits`]; its violations as diagnostics
//!   in [`violations`]), [`semantic`]
//!   (rules a schema cannot express) and [`mask`] (literal secrets never quoted), one file
//!   at a time (`pipeline`: on the calling thread, helped by other threads for large
//!   repos), so only a few files' parse trees are alive.
//! - [`locate`](mod@locate): a field of a loaded document found again (file, line,
//!   column, the quoted line) for problems found after loading, such as an unknown
//!   scorer at plan time: `manifest::locate(&origin, &"log_streams[3].name".parse()?)`.

pub mod check;
pub mod diagnostic;
pub mod files;
pub mod interpolate;
pub mod limits;
pub mod load;
pub mod locate;
pub mod mask;
mod pipeline;
pub mod pricing;
pub mod reference;
pub mod schema;
pub mod semantic;
pub mod set;
pub mod shared;
pub mod types;
pub mod violations;
pub mod yaml;

pub use load::{LoadOutcome, load, load_on};
pub use locate::{FieldPath, Location, locate};
pub use pipeline::Threads;

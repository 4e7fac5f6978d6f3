//! Projects and log streams themselves: a declared project or log stream
//! that does not exist is created, before anything inside it, in the same
//! apply. Everything evalctl knows of their existence is here: the client's
//! writes ([`wire`], `client`), what the reader makes of one that does not
//! exist yet or was renamed, and a project's own live state ([`read`]), the
//! pending ids everything inside it is planned with, resolved when apply
//! runs ([`pending`], hooked into `crate::reconcile::pending`), addressed
//! ([`address`]), planned ([`plan`]), sent ([`ops`]), checked in a saved
//! plan ([`confirm`]) and exported ([`export`]); the projects a repo owns
//! without declaring them, deleted with `--prune --allow-destroy`
//! ([`prune`]). The core reaches all of it through the registry
//! (`crate::kinds`). Finding them by name or id, and reading what they
//! hold, is the core's reader (`crate::reconcile::read::projects`, `runs`).

pub mod address;
mod client;
pub mod confirm;
pub mod export;
pub mod ops;
pub mod pending;
pub mod plan;
pub mod prune;
pub mod read;
pub mod wire;

pub use address::{LogStreamAddress, ProjectAddress};
pub use ops::ProjectOp;

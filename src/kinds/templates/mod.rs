//! Annotation and feedback templates of a project: a set keyed by name,
//! patched in place for their name and criteria, replaced for their
//! constraints. Everything evalctl knows of them is here: the wire types
//! ([`wire`]), how they are read ([`read`], with the client's calls) and
//! reduced ([`live`]), how they are compared ([`normalize`]) and planned
//! ([`plan`]), and how live ones are written as manifests ([`export`]).

pub mod address;
mod client;
pub mod confirm;
pub mod export;
pub mod live;
pub mod normalize;
pub mod ops;
pub mod plan;
pub mod read;
pub mod scope;
pub mod spec;
pub mod wire;

pub use address::{TemplateAddress, TemplateKind};
pub use live::TemplateState;
pub use ops::{TemplateBody, TemplateOp};
pub use wire::*;

//! Annotation and feedback templates of a project: a set keyed by name,
//! patched in place for their name and criteria, replaced for their
//! constraints. Everything evalctl knows of them is here: the wire types
//! ([`wire`]), how they are read ([`read`], with the client's calls) and
//! reduced ([`live`]), and how they are planned ([`plan`]).

mod client;
pub mod live;
pub mod plan;
pub mod read;
pub mod wire;

pub use live::TemplateState;
pub use wire::*;

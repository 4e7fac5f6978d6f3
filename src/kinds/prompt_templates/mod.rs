//! Prompt templates of a project (`prompt_templates:` in a Project): a set
//! keyed by name, each with append-only, immutable versions of which one is
//! selected. A changed template or settings is one new version; a changed
//! selection is a PUT of the selected version; nothing else changes in place.
//! Everything evalctl knows of them is here: the manifest spec ([`spec`]),
//! the wire types ([`wire`]) and the client's calls, how they are read
//! ([`read`]) and reduced ([`live`]), compared ([`normalize`]), addressed
//! ([`address`]), planned ([`plan`]), sent ([`ops`]) and exported
//! ([`export`]).

pub mod address;
mod client;
pub mod confirm;
pub mod export;
pub mod files;
pub mod live;
pub mod normalize;
pub mod ops;
pub mod plan;
pub mod read;
pub mod spec;
pub mod wire;

pub use address::PromptTemplateAddress;
pub use live::PromptTemplateState;
pub use ops::PromptTemplateOp;
pub use spec::PromptTemplateSpec;

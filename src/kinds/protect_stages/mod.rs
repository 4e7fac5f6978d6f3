//! Protect stages of a project (`protect_stages:` in a Project): a set keyed
//! by name, each with a description and type (set when it is created: the
//! service cannot change them), whether it is paused, and its prioritized
//! rulesets. A changed ruleset is one replace of all of them (the service
//! bumps the stage's `version`, which is not a difference); a pause or a
//! resume is a PUT; the service has no delete, so a stage removed from the
//! manifests can only be paused (`--prune`).
//!
//! The service never returns a stage's rulesets, and it cannot list a
//! project's stages (a stage is read by name or id). What evalctl sent is
//! kept in a local record ([`record`]): the rulesets last sent and the
//! version the service gave the stage then. While the stage's version is
//! still that one, its rulesets are known; otherwise (a replace by someone
//! else, no record on this machine) they are unknown and a plan replaces
//! them once. The record also names the stages evalctl made, which is how a
//! stage removed from the manifests is found.
//!
//! Everything evalctl knows of them is here: the manifest spec ([`spec`]),
//! the wire types ([`wire`]) and the client's calls, the record, how they are
//! read ([`read`]) and reduced ([`live`]), compared ([`normalize`]),
//! addressed ([`address`]), planned ([`plan`]), sent ([`ops`]) and exported
//! ([`export`]).

pub mod address;
mod client;
pub mod confirm;
pub mod export;
pub mod live;
pub mod normalize;
pub mod ops;
pub mod plan;
pub mod read;
pub mod record;
pub mod spec;
pub mod webhooks;
pub mod wire;

pub use address::ProtectStageAddress;
pub use live::ProtectStageState;
pub use ops::ProtectStageOp;
pub use spec::ProtectStageSpec;

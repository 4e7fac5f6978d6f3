//! Custom scorers (`kind: Scorer`, one document per scorer): a set keyed by
//! name in the organization, each with append-only, immutable versions of
//! which one may be pinned as the default. A changed definition (an LLM
//! judge's prompt and settings, a code scorer's file) is one new version;
//! metadata, scope and the pin are updates; nothing else changes in place.
//! Everything evalctl knows of them is here: the manifest spec ([`spec`])
//! and its files ([`files`]), the wire bodies ([`wire`]) and the client's
//! calls, how they are read ([`read`]) and reduced ([`live`]), compared
//! ([`normalize`]), addressed ([`address`]), planned ([`plan`]; metric
//! settings name a scorer the same apply creates by a [`pending`] id), sent
//! ([`ops`], [`code`]), confirmed ([`confirm`]) and exported ([`export`]).

pub mod address;
mod client;
pub mod code;
pub mod confirm;
pub mod export;
pub mod files;
pub mod live;
pub mod normalize;
pub mod ops;
pub mod pending;
pub mod plan;
pub mod read;
pub mod spec;
pub mod uses;
pub mod wire;

pub use address::CustomScorerAddress;
pub use live::CustomScorerState;
pub use ops::CustomScorerOp;
pub use spec::CustomScorerSpec;

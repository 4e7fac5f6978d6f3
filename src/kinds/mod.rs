//! Resource kinds, one module each: a kind's wire types, live state, reader,
//! planner, operations and export live in its folder, and the generic core
//! (addresses, targets, plans, apply, confirmation, renderers) reaches a kind
//! only through this registry.

pub mod json;
pub mod projects;
pub mod prompt_templates;
pub mod protect_stages;
pub mod scorers;
pub mod templates;

//! The service's OpenAPI reference (`reference/service-openapi.json`, a crate
//! asset): the public description of the service's operations and schemas,
//! embedded once at build time. The manifest schema derives its limits from it,
//! the sandbox validates requests against it, and the tests check the client's
//! requests and the sandbox's responses against it. Where it and the spec
//! disagree, the spec wins (the sandbox patches those places).

/// The reference's JSON text, as embedded at build time.
pub const SERVICE_REFERENCE: &str = include_str!("../../reference/service-openapi.json");

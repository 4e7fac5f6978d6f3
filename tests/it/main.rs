//! The integration tests: one test binary, one module per area, so the
//! shared support modules compile once and a change in `src` relinks one
//! binary, not thirty-five.

mod ci_support;
mod client_support;
mod e2e_support;
mod fault_support;
mod property_support;
mod render_support;
mod sandbox_support;

mod ci_recipes;
mod cli_docs;
mod client_aimd;
mod client_auth;
mod client_dashboards;
mod client_faults;
mod client_ops;
mod client_reference;
mod client_retry;
mod client_sandbox;
mod client_secrets;
mod e2e_export;
mod e2e_read_path;
mod e2e_reconcile;
mod e2e_secrets;
mod fault_suite;
mod install_action;
mod manifest_load;
mod manifest_yaml;
mod plan_pure;
mod property_manifest;
mod property_reconcile;
mod property_sandbox;
mod reference_fresh;
mod render_json;
mod render_markdown;
mod render_text;
mod sandbox_auth;
mod sandbox_catalog;
mod sandbox_connections;
mod sandbox_content_type;
mod sandbox_contract;
mod sandbox_dashboards;
mod sandbox_durability;
mod sandbox_integrations;
mod sandbox_operations;
mod sandbox_runtime;
mod sandbox_search;
mod sandbox_trends;
mod sandbox_validation;
mod sandbox_widgets;
mod schema_fresh;
mod schemacheck_differential;
mod snapshots_referenced;
mod validate_cli;

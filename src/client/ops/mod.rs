//! The typed methods of [`super::Client`], one module per resource kind. Each
//! method is one operation of [`super::operation`]; finders and all-pages
//! walks are built on them.

mod integrations;
mod login;
mod metric_settings;
mod projects;
mod runs;
mod scorers;
mod trends;
mod users;

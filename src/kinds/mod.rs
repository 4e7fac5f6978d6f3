//! Resource kinds, one module each: a kind's wire types, live state, reader,
//! planner, operations and export live in its folder, and the generic core
//! (addresses, targets, plans, apply, confirmation, renderers) reaches a kind
//! only through this registry.
//!
//! The registry is where a kind is one line: [`Address`] (and with it
//! [`AddressKind`], the dispatch to each kind's [`KindAddress`] and to its
//! key fields) is generated from the list below by `addresses!`.

pub mod json;
pub mod projects;
pub mod prompt_templates;
pub mod protect_stages;
pub mod scorers;
pub mod templates;

use serde::{Deserialize, Serialize};

use crate::plan::address::{
    CustomIntegrationAddress, DashboardAddress, FavoriteAddress, IntegrationAddress, KindAddress,
    MetricSettingsAddress, SectionAddress, SettingsAddress, WidgetAddress,
};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};

/// Generates, from one line per kind of address (its doc, its variant and
/// its type, which implements [`KindAddress`] and [`KeyFields`]):
/// [`Address`], [`AddressKind`] (the same variants without their fields, in
/// the same order) and the dispatch from an address to its kind's code.
macro_rules! addresses {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty), )*) => {
        /// The address of an object a plan can touch: one variant per kind of
        /// address, each a type of its own that implements [`KindAddress`]. Written
        /// as the kind's fields with a `type` tag; ordered by kind (in this order),
        /// then by the kind's fields.
        #[derive(
            Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
            schemars::JsonSchema,
        )]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum Address {
            $( $(#[$doc])* $variant($ty), )*
        }

        /// The kind of object a change is to, as [`Address`]'s variants (what a
        /// spilled change says of itself without being read back).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum AddressKind {
            $( #[doc = concat!("[`Address::", stringify!($variant), "`].")] $variant, )*
        }

        impl AddressKind {
            /// In the order of [`Address`]'s variants, which is the order addresses sort in.
            pub(crate) const ALL: &[AddressKind] = &[$(AddressKind::$variant,)*];

            /// The kind of `address`.
            pub fn of(address: &Address) -> Self {
                match address {
                    $( Address::$variant(_) => AddressKind::$variant, )*
                }
            }
        }

        impl Address {
            /// The address as its kind sees it.
            pub(crate) fn of_kind(&self) -> &dyn KindAddress {
                match self {
                    $( Address::$variant(a) => a, )*
                }
            }

            /// Writes the address's fields (not its kind) to a key.
            pub(crate) fn write_key(&self, w: &mut KeyWriter<'_>) {
                match self {
                    $( Address::$variant(a) => KeyFields::write_key(a, w), )*
                }
            }

            /// The address of kind `kind` whose fields [`Address::write_key`] wrote.
            pub(crate) fn read_key(kind: AddressKind, r: &mut KeyReader<'_>) -> Self {
                match kind {
                    $( AddressKind::$variant => Address::$variant(<$ty as KeyFields>::read_key(r)), )*
                }
            }
        }
    };
}

addresses! {
    /// The calling user's integration with a provider.
    Integration(IntegrationAddress),
    /// A named custom integration of the calling user.
    CustomIntegration(CustomIntegrationAddress),
    /// A custom scorer, or one of its versions.
    CustomScorer(scorers::CustomScorerAddress),
    /// A template of a project.
    Template(templates::address::TemplateAddress),
    /// Metric settings of a log stream or experiment.
    MetricSettings(MetricSettingsAddress),
    /// A dashboard of a log stream other than its default one.
    Dashboard(DashboardAddress),
    /// A section of a dashboard of a log stream.
    Section(SectionAddress),
    /// The favorite state of a log stream's default dashboard.
    Favorite(FavoriteAddress),
    /// A widget of a dashboard, in a section or at its top level.
    Widget(WidgetAddress),
    /// The settings of a dashboard (interval, time range, group-by).
    Settings(SettingsAddress),
    /// A project's prompt template, or one of its versions.
    PromptTemplate(prompt_templates::PromptTemplateAddress),
    /// A project's Protect stage.
    ProtectStage(protect_stages::ProtectStageAddress),
    /// A project itself.
    Project(projects::ProjectAddress),
    /// A log stream itself.
    LogStream(projects::LogStreamAddress),
}

//! Where a template's manifest fields go at the service: the bindings of
//! its limits (`crate::manifest::limits`, registered in
//! `crate::kinds::LIMIT_BINDINGS`).

use crate::manifest::limits::{Binding, Service};

/// The templates' bindings: each kind's manifest definition to the bodies
/// of its create and update.
pub const LIMITS: &[Binding] = &[
    Binding {
        manifest: "/$defs/TemplateWithAnnotationConstraints",
        service: &[
            Service::Schema("AnnotationTemplateCreate"),
            Service::Schema("AnnotationTemplateUpdate"),
        ],
    },
    Binding {
        manifest: "/$defs/TemplateWithFeedbackConstraints",
        service: &[
            Service::Schema("FeedbackTemplateCreate"),
            Service::Schema("FeedbackTemplateUpdate"),
        ],
    },
];

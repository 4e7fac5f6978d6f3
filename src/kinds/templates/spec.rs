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

#[cfg(test)]
mod limit_tests {
    use super::LIMITS;
    use crate::manifest::limits::{apply_with, service_reference};
    use crate::manifest::schema::generate_types;

    #[test]
    fn the_limits_of_the_reference_on_its_fields() {
        let mut schema = generate_types();
        let applied = apply_with(&mut schema, &service_reference(), LIMITS, false);
        insta::assert_snapshot!(applied.listing(), @r#"
        /$defs/TemplateWithAnnotationConstraints/properties/name minLength=1 <- #/components/schemas/AnnotationTemplateCreate/properties/name
        /$defs/TemplateWithAnnotationConstraints/properties/name maxLength=255 <- #/components/schemas/AnnotationTemplateCreate/properties/name
        /$defs/TemplateWithAnnotationConstraints/properties/criteria minLength=1 <- #/components/schemas/AnnotationTemplateCreate/properties/criteria/anyOf/0
        /$defs/AnnotationConstraints/oneOf/2/properties/min minimum=0 (had it) <- #/components/schemas/api__schemas__annotation__ScoreConstraints/properties/min
        /$defs/AnnotationConstraints/oneOf/2/properties/max minimum=0 (had it) <- #/components/schemas/api__schemas__annotation__ScoreConstraints/properties/max
        /$defs/AnnotationConstraints/oneOf/3/properties/tags/items minLength=1 (had it) <- #/components/schemas/api__schemas__annotation__TagsConstraints/properties/tags/items
        /$defs/AnnotationConstraints/oneOf/3/properties/tags/items maxLength=255 (had it) <- #/components/schemas/api__schemas__annotation__TagsConstraints/properties/tags/items
        /$defs/AnnotationConstraints/oneOf/5/properties/choices/items minLength=1 (had it) <- #/components/schemas/api__schemas__annotation__ChoiceConstraints/properties/choices/items
        /$defs/AnnotationConstraints/oneOf/5/properties/choices/items maxLength=255 (had it) <- #/components/schemas/api__schemas__annotation__ChoiceConstraints/properties/choices/items
        /$defs/AnnotationConstraints/oneOf/6/properties/choices_tree maxItems=50 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceConstraints/properties/choices_tree/anyOf/0
        /$defs/AnnotationTreeNode/properties/label minLength=1 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceNode-Input/properties/label
        /$defs/AnnotationTreeNode/properties/label maxLength=255 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceNode-Input/properties/label
        /$defs/AnnotationTreeNode/properties/id minLength=1 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceNode-Input/properties/id
        /$defs/AnnotationTreeNode/properties/id maxLength=255 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceNode-Input/properties/id
        /$defs/AnnotationTreeNode/properties/children maxItems=50 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceNode-Input/properties/children
        /$defs/AnnotationConstraints/oneOf/6/properties/choices_tree_yaml minLength=1 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceConstraints/properties/choices_tree_yaml/anyOf/0
        /$defs/AnnotationConstraints/oneOf/6/properties/choices_tree_yaml maxLength=10000 (had it) <- #/components/schemas/api__schemas__annotation__TreeChoiceConstraints/properties/choices_tree_yaml/anyOf/0
        /$defs/TemplateWithAnnotationConstraints/properties/name minLength=1 (had it) <- #/components/schemas/AnnotationTemplateUpdate/properties/name
        /$defs/TemplateWithAnnotationConstraints/properties/name maxLength=255 (had it) <- #/components/schemas/AnnotationTemplateUpdate/properties/name
        /$defs/TemplateWithAnnotationConstraints/properties/criteria minLength=1 (had it) <- #/components/schemas/AnnotationTemplateUpdate/properties/criteria/anyOf/0
        /$defs/TemplateWithFeedbackConstraints/properties/name minLength=1 <- #/components/schemas/FeedbackTemplateCreate/properties/name
        /$defs/TemplateWithFeedbackConstraints/properties/name maxLength=255 <- #/components/schemas/FeedbackTemplateCreate/properties/name
        /$defs/TemplateWithFeedbackConstraints/properties/criteria minLength=1 <- #/components/schemas/FeedbackTemplateCreate/properties/criteria/anyOf/0
        /$defs/FeedbackConstraints/oneOf/2/properties/min minimum=0 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__ScoreConstraints/properties/min
        /$defs/FeedbackConstraints/oneOf/2/properties/max minimum=0 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__ScoreConstraints/properties/max
        /$defs/FeedbackConstraints/oneOf/3/properties/tags/items minLength=1 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__TagsConstraints/properties/tags/items
        /$defs/FeedbackConstraints/oneOf/3/properties/tags/items maxLength=255 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__TagsConstraints/properties/tags/items
        /$defs/FeedbackConstraints/oneOf/5/properties/choices minItems=2 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__ChoiceConstraints/properties/choices
        /$defs/FeedbackConstraints/oneOf/5/properties/choices maxItems=50 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__ChoiceConstraints/properties/choices
        /$defs/FeedbackConstraints/oneOf/5/properties/choices/items minLength=1 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__ChoiceConstraints/properties/choices/items
        /$defs/FeedbackConstraints/oneOf/5/properties/choices/items maxLength=255 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__ChoiceConstraints/properties/choices/items
        /$defs/FeedbackConstraints/oneOf/6/properties/choices_tree minItems=1 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__TreeChoiceConstraints-Input/properties/choices_tree
        /$defs/FeedbackTreeNode/properties/label minLength=1 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__TreeChoiceNode-Input/properties/label/anyOf/0
        /$defs/FeedbackTreeNode/properties/label maxLength=255 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__TreeChoiceNode-Input/properties/label/anyOf/0
        /$defs/FeedbackTreeNode/properties/value minLength=1 (had it) <- #/components/schemas/libs__python__schemas__log_records__feedback__TreeChoiceNode-Input/properties/value
        /$defs/TemplateWithFeedbackConstraints/properties/name minLength=1 (had it) <- #/components/schemas/FeedbackTemplateUpdate/properties/name
        /$defs/TemplateWithFeedbackConstraints/properties/name maxLength=255 (had it) <- #/components/schemas/FeedbackTemplateUpdate/properties/name
        /$defs/TemplateWithFeedbackConstraints/properties/criteria minLength=1 (had it) <- #/components/schemas/FeedbackTemplateUpdate/properties/criteria/anyOf/0
        "#);
        for binding in LIMITS {
            let def = binding.manifest.trim_start_matches("/$defs/");
            let name = def.split('/').next().unwrap_or(def);
            assert!(applied.reached.contains(name), "{name} was not reached");
        }
    }
}

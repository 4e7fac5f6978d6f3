//! `kind: Settings`: the repo's own thresholds for the mass-change guard, turned into
//! the [`GuardLimits`] plans use, and the warning a repo gets for loosening them.
//!
//! Thresholds tighter than the defaults are taken quietly. Looser ones (a larger share,
//! or a larger collection before the guard applies) are taken too, never silently:
//! every load warns at the Settings document's `guard` field, naming the file and the
//! new limit, and every plan carries the same sentence as a note, which the
//! pull-request comment shows.

use crate::manifest::set::{Located, ManifestSet};
use crate::plan::GuardLimits;

use super::spec::SettingsSpec;

/// The guard's limits the repo sets: the defaults, with what its Settings document
/// gives in their place.
#[must_use]
pub fn guard_limits(set: &ManifestSet) -> GuardLimits {
    set.settings
        .as_ref()
        .map_or_else(GuardLimits::default, |s| limits_of(&s.spec))
}

/// The limits `spec` sets.
#[must_use]
pub fn limits_of(spec: &SettingsSpec) -> GuardLimits {
    let defaults = GuardLimits::default();
    let Some(guard) = &spec.guard else {
        return defaults;
    };
    GuardLimits {
        max_share_percent: guard.max_share.map_or(defaults.max_share_percent, |share| {
            // In whole percent, rounded down: the schema keeps it within 0..=1.
            let percent = (share.clamp(0.0, 1.0) * 100.0 + 1e-9).floor();
            // Within 0..=100 after the clamp.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let percent = percent as u32;
            percent
        }),
        min_objects: guard.min_objects.map_or(defaults.min_objects, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
    }
}

/// How `limits` loosen the defaults, as a sentence per limit; empty when they do not.
#[must_use]
pub fn loosened(limits: GuardLimits) -> Vec<String> {
    let defaults = GuardLimits::default();
    let mut out = Vec::new();
    if limits.max_share_percent > defaults.max_share_percent {
        out.push(format!(
            "max_share {}% (default {}%)",
            limits.max_share_percent, defaults.max_share_percent
        ));
    }
    if limits.min_objects > defaults.min_objects {
        out.push(format!(
            "min_objects {} (default {})",
            limits.min_objects, defaults.min_objects
        ));
    }
    out
}

/// The warning for the Settings document `settings` when it loosens the guard: the
/// sentence plans note and loading reports; `None` when it does not.
#[must_use]
pub fn loosening_warning(settings: &Located<SettingsSpec>) -> Option<String> {
    let loosened = loosened(limits_of(&settings.spec));
    if loosened.is_empty() {
        return None;
    }
    Some(format!(
        "the mass-change guard is loosened by {}: {}",
        settings.origin,
        loosened.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::spec::GuardSettings;

    fn spec(max_share: Option<f64>, min_objects: Option<u64>) -> SettingsSpec {
        SettingsSpec {
            guard: Some(GuardSettings {
                max_share,
                min_objects,
            }),
            ..SettingsSpec::default()
        }
    }

    #[test]
    fn settings_become_limits_and_only_loosening_is_named() {
        assert_eq!(limits_of(&SettingsSpec::default()), GuardLimits::default());
        let tight = limits_of(&spec(Some(0.1), Some(4)));
        assert_eq!(
            tight,
            GuardLimits {
                max_share_percent: 10,
                min_objects: 4
            }
        );
        assert!(loosened(tight).is_empty());
        let loose = limits_of(&spec(Some(0.5), Some(20)));
        assert_eq!(loose.max_share_percent, 50);
        assert_eq!(
            loosened(loose),
            vec![
                "max_share 50% (default 25%)".to_owned(),
                "min_objects 20 (default 8)".to_owned()
            ]
        );
        assert_eq!(limits_of(&spec(Some(0.29), None)).max_share_percent, 29);
        assert_eq!(limits_of(&spec(Some(0.255), None)).max_share_percent, 25);
        assert_eq!(limits_of(&spec(Some(1.0), None)).max_share_percent, 100);
    }
}

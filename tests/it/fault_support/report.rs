//! Reading an `apply -o json` report and checking that a run under faults
//! was honest about what it did.

use std::collections::BTreeSet;

use evalctl::plan::Address;
use evalctl::plan::{ApplyReport, OutcomeStatus};

use super::expected::Expected;
use super::live::LiveView;

/// A JSON apply report read back from `apply -o json`.
pub fn parse_report(stdout: &str) -> Option<ApplyReport> {
    serde_json::from_str(stdout.trim()).ok()
}

/// Checks that a first apply under faults ended honestly, and returns its
/// report (none when it stopped before applying, exit 1):
/// - exit 0 or 3, or 1 with an error message;
/// - exit 0 exactly when the report says complete;
/// - every change it says succeeded is live as wanted (a delete, which
///   only removes a second copy of a declared name, leaves it live once).
#[track_caller]
pub fn check_honest(
    status: i32,
    stdout: &str,
    stderr: &str,
    live: &LiveView,
    expected: &Expected,
) -> Option<ApplyReport> {
    let both = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    match status {
        1 => {
            assert!(
                stderr.contains("error"),
                "exit 1 without an error message\n{both}"
            );
            return None;
        }
        0 | 3 => {}
        other => panic!("exit {other}: neither 0, 3 nor 1\n{both}"),
    }
    let report = parse_report(stdout).unwrap_or_else(|| panic!("no JSON apply report\n{both}"));
    assert_eq!(
        status == 0,
        report.is_complete(),
        "the exit status and the report disagree\n{both}"
    );
    let managed: BTreeSet<Address> = expected.addresses().into_iter().collect();
    for outcome in &report.outcomes {
        let address = outcome.address.address();
        assert!(
            managed.contains(&address),
            "the report names {}, which the repo does not manage\n{both}",
            outcome.address
        );
        if outcome.status == OutcomeStatus::Succeeded {
            // The repo deletes nothing but a second copy of a declared name
            // (drift): after it, the name is live once, as wanted.
            if let Err(e) = live.check(expected, &address) {
                panic!(
                    "the report says {} succeeded, but live disagrees: {e}\n{both}",
                    outcome.address
                );
            }
        } else {
            let detail = outcome.detail.as_deref().unwrap_or_default();
            assert!(
                !detail.is_empty(),
                "{} {:?} without a reason\n{both}",
                outcome.address,
                outcome.status
            );
            // A create whose answer was lost and that a re-read did not find
            // is reported as "most likely not created": a request the service
            // processes late may still land, so absence is not asserted.
        }
    }
    Some(report)
}

/// The changes of a `plan -o json` document, reduced to what a plan decides
/// (address, action, fields, operations), without what is only
/// informational and may be missing when a lookup failed (who created an
/// object, the blast radius of a scorer version). `None` when it is not a
/// plan document.
pub fn plan_changes(stdout: &str) -> Option<Vec<serde_json::Value>> {
    let doc: serde_json::Value = serde_json::from_str(stdout.trim()).ok()?;
    let changes = doc.get("changes")?.as_array()?;
    Some(
        changes
            .iter()
            .map(|c| {
                serde_json::json!({
                    "address": c["address"],
                    "action": c["action"],
                    "fields": c["fields"],
                    "operations": c["operations"],
                })
            })
            .collect(),
    )
}

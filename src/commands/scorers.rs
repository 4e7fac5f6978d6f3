//! `evalctl scorers usage`: the projects that use a scorer version (spec
//! operation 6, every page).

use crate::cli::{ScorerUsageArgs, ScorersCommand};
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::render::Format;

use super::connect::connect_or_fail;

/// Runs `evalctl scorers …`.
pub async fn run(command: &ScorersCommand, printer: &Printer) -> ExitStatus {
    match command {
        ScorersCommand::Usage(args) => usage(args, printer).await,
    }
}

async fn usage(args: &ScorerUsageArgs, printer: &Printer) -> ExitStatus {
    let connection = match connect_or_fail(&args.live, printer) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let mut projects = match connection
        .client
        .scorer_version_projects(&args.scorer_version_id)
        .await
    {
        Ok(p) => p,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitStatus::Failure;
        }
    };
    projects.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
    match args.output {
        Format::Json => {
            let doc = serde_json::json!({
                "scorer_version_id": args.scorer_version_id,
                "total_count": projects.len(),
                "projects": projects.iter().map(|p| serde_json::json!({
                    "id": p.id, "name": p.name,
                    "num_logstreams": p.num_logstreams, "num_experiments": p.num_experiments,
                })).collect::<Vec<_>>(),
            });
            printer.out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            ));
        }
        Format::Text | Format::Markdown => {
            if projects.is_empty() {
                printer.out(&format!(
                    "No project uses scorer version {}.\n",
                    args.scorer_version_id
                ));
            } else {
                let mut text = format!(
                    "{} project(s) use scorer version {}:\n",
                    projects.len(),
                    args.scorer_version_id
                );
                for p in &projects {
                    text.push_str(&format!("  {}  ({})\n", p.name, p.id));
                }
                printer.out(&text);
            }
        }
    }
    ExitStatus::Success
}

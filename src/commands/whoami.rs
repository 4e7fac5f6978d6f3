//! `evalctl whoami`: the identity and organization the credentials resolve to.

use crate::cli::WhoamiArgs;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::render::Format;
use crate::scrub::escape_controls;

use super::connect::connect_or_fail;

/// Runs `evalctl whoami`.
pub async fn run(args: &WhoamiArgs, printer: &Printer) -> ExitStatus {
    let connection = match connect_or_fail(&args.live, printer) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let user = match connection.client.current_user().await {
        Ok(u) => u,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitStatus::Failure;
        }
    };
    let scheme = connection.client.config().credentials.scheme();
    let service = connection.service_label();
    match args.output {
        Format::Json => {
            let doc = serde_json::json!({
                "user": {"id": user.id, "email": user.email, "first_name": user.first_name,
                         "last_name": user.last_name, "role": user.role, "auth_method": user.auth_method},
                "organization": {"id": user.organization_id, "name": user.organization_name},
                "service": service,
                "credentials": scheme,
            });
            printer.out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            ));
        }
        Format::Text | Format::Markdown => {
            // Names read from the service: control characters escaped, as plans show them.
            printer.out(&format!(
                "{}\n  role:         {}\n  organization: {} ({})\n  service:      {}\n  credentials:  {}\n",
                escape_controls(&user.display()),
                user.role,
                escape_controls(&user.organization_name),
                escape_controls(&user.organization_id),
                service,
                scheme
            ));
        }
    }
    ExitStatus::Success
}

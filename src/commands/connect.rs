//! Connecting a command to live state: the configured service, or an
//! in-process sandbox (`--sandbox`, `--sandbox-state FILE`).

use crate::api::Secret;
use crate::cli::LiveArgs;
use crate::client::{Client, ClientConfig, ConfigError, Credentials};
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::sandbox::fixture::Fixture;
use crate::sandbox::{Sandbox, SandboxError, SandboxHandle};

/// The demo API key of the sandbox's built-in fixture (public, documented).
pub const SANDBOX_DEMO_API_KEY: &str = "demo-api-key";

/// A client, and the in-process sandbox it talks to, if any (kept alive as
/// long as the connection).
pub struct Connection {
    /// The client.
    pub client: Client,
    /// The in-process sandbox, when one was started.
    pub sandbox: Option<SandboxHandle>,
}

impl Connection {
    /// What the client talks to, for messages and saved plans: the base URL,
    /// or `sandbox` for an in-process sandbox.
    pub fn service_label(&self) -> String {
        match &self.sandbox {
            Some(_) => "sandbox".to_owned(),
            None => self.client.config().base_url.clone(),
        }
    }
}

/// Connects as `args` says, or prints why it cannot; `Err` carries the exit
/// status.
pub fn connect_or_fail(args: &LiveArgs, printer: &Printer) -> Result<Connection, ExitStatus> {
    connect(args).map_err(|e| {
        printer.error(&e.to_string());
        ExitStatus::Failure
    })
}

/// Why a command could not connect.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The in-process sandbox did not start.
    #[error("could not start the sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    /// The configuration of the service is not usable.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Connects as `args` says.
pub fn connect(args: &LiveArgs) -> Result<Connection, ConnectError> {
    if args.sandbox || args.sandbox_state.is_some() {
        let mut builder = Sandbox::builder().fixture(Fixture::demo());
        if let Some(path) = &args.sandbox_state {
            builder = builder.state_file(path.clone());
        }
        let handle = builder.start()?;
        let mut config = ClientConfig::new(
            handle.base_url().to_owned(),
            Credentials::ApiKey(Secret::new(SANDBOX_DEMO_API_KEY)),
        );
        config.concurrency = usize::from(args.concurrency);
        let client = Client::new(config)?;
        return Ok(Connection {
            client,
            sandbox: Some(handle),
        });
    }
    let mut config = args.connection.to_config()?;
    config.concurrency = usize::from(args.concurrency);
    let client = Client::new(config)?;
    Ok(Connection {
        client,
        sandbox: None,
    })
}

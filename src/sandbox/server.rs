//! Starting a sandbox: in-process for tests ([`SandboxBuilder::start`]:
//! its own thread and tokio runtime on 127.0.0.1:0, so blocking test code
//! cannot deadlock it, driven through a [`SandboxHandle`]), or in the
//! caller's runtime for the CLI ([`SandboxBuilder::bind`] then
//! [`Bound::serve`]).

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderName;

use super::app::App;
use super::auth::BasicPolicy;
use super::conn::{ConnInfo, ConnLimits, SandboxListener};
use super::error::SandboxError;
use super::faults::{Faults, RequestRecord};
use super::fixture::Fixture;
use super::persist::StateDb;
use super::routes::router;
use super::store::State;

/// The default API key header (the spec's).
pub const DEFAULT_API_KEY_HEADER: &str = "Service-AO-API-Key";

/// How long a stopping sandbox waits for requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Entry point: `Sandbox::builder()`.
#[derive(Debug)]
pub struct Sandbox;

impl Sandbox {
    /// A builder with the default fixture, no faults, no state file, the
    /// spec's key header, listening on 127.0.0.1 on a free port.
    pub fn builder() -> SandboxBuilder {
        SandboxBuilder::default()
    }
}

/// How to start a sandbox.
#[derive(Debug, Default)]
pub struct SandboxBuilder {
    fixture: Option<Fixture>,
    faults: Faults,
    state_file: Option<PathBuf>,
    api_key_header: Option<String>,
    listen: Option<SocketAddr>,
    limits: ConnLimits,
    checkpoint_after: Option<u64>,
    basic: BasicPolicy,
}

impl SandboxBuilder {
    /// Refuse HTTP Basic on every trends operation, not only on the spec's
    /// three, as some deployments do (default: the spec's rules).
    pub fn refuse_basic_on_trends(mut self, refuse: bool) -> Self {
        self.basic.refuse_on_trends = refuse;
        self
    }

    /// The state to start from (default: [`Fixture::demo`]). Ignored when
    /// the state file exists.
    pub fn fixture(mut self, fixture: Fixture) -> Self {
        self.fixture = Some(fixture);
        self
    }

    /// Faults to inject from the start.
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Persist every change to this file (loaded at start when it exists;
    /// one sandbox per file).
    pub fn state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state_file = Some(path.into());
        self
    }

    /// Checkpoint the state database's write-ahead log into the file when
    /// it passes this many bytes (default: SQLite's, 1,000 pages). Small
    /// values make checkpoints frequent: for tests of them.
    pub fn checkpoint_after_bytes(mut self, bytes: u64) -> Self {
        self.checkpoint_after = Some(bytes);
        self
    }

    /// The header carrying API keys (default `Service-AO-API-Key`).
    pub fn api_key_header(mut self, name: &str) -> Self {
        self.api_key_header = Some(name.to_owned());
        self
    }

    /// The address to listen on (default `127.0.0.1:0`).
    pub fn listen(mut self, addr: SocketAddr) -> Self {
        self.listen = Some(addr);
        self
    }

    /// How long a request head may take to arrive, from its first byte
    /// (from the connection's start for its first request). Default 10 s.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_read_timeout = timeout;
        self
    }

    /// How long a connection may stay open with no request between two
    /// requests. Default 120 s.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout;
        self
    }

    /// The most connections served at once; more are answered 503 with
    /// `Retry-After`. Default: three quarters of the open-file limit less
    /// 128, at most 1,024.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.limits.max_connections = max;
        self
    }

    /// The most connections served at once from one IP address; more from it
    /// are answered 503 with `Retry-After`. Default: half of
    /// [`SandboxBuilder::max_connections`].
    pub fn max_connections_per_peer(mut self, max: usize) -> Self {
        self.limits.max_per_peer = Some(max);
        self
    }

    fn app(self) -> Result<(Arc<App>, SocketAddr, ConnLimits), SandboxError> {
        self.faults.validate()?;
        self.limits.validate()?;
        let header_name = self
            .api_key_header
            .unwrap_or_else(|| DEFAULT_API_KEY_HEADER.to_owned());
        let header =
            HeaderName::try_from(header_name.as_str()).map_err(|_| SandboxError::BadOption {
                option: "api_key_header",
                reason: format!("{header_name:?} is not a header name"),
            })?;
        let fixture = self.fixture.unwrap_or_default();
        let (state_file, state) = match &self.state_file {
            Some(path) => {
                let (file, state) = StateDb::open(path, fixture, self.checkpoint_after)?;
                (Some(file), state)
            }
            None => (None, fixture.into_state()),
        };
        let addr = self
            .listen
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
        Ok((
            Arc::new(App::new(state, self.faults, state_file, header)?),
            addr,
            self.limits,
        ))
    }

    /// Binds the listen address in the current tokio runtime.
    pub async fn bind(self) -> Result<Bound, SandboxError> {
        let basic = self.basic;
        let (app, addr, limits) = self.app()?;
        let listener =
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| SandboxError::Bind {
                    addr: addr.to_string(),
                    source: e,
                })?;
        let local = listener.local_addr().map_err(SandboxError::Serve)?;
        Ok(Bound {
            app,
            listener,
            addr: local,
            limits,
            basic,
        })
    }

    /// Starts the sandbox on its own thread and runtime and returns at once,
    /// listening.
    pub fn start(self) -> Result<SandboxHandle, SandboxError> {
        let basic = self.basic;
        let (app, addr, limits) = self.app()?;
        let std_listener = std::net::TcpListener::bind(addr).map_err(|e| SandboxError::Bind {
            addr: addr.to_string(),
            source: e,
        })?;
        std_listener
            .set_nonblocking(true)
            .map_err(SandboxError::Runtime)?;
        let local = std_listener.local_addr().map_err(SandboxError::Runtime)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("evalctl-sandbox")
            .enable_all()
            .build()
            .map_err(SandboxError::Runtime)?;
        let listener = {
            let _guard = runtime.enter();
            tokio::net::TcpListener::from_std(std_listener).map_err(SandboxError::Runtime)?
        };
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let bound = Bound {
            app: Arc::clone(&app),
            listener,
            addr: local,
            limits,
            basic,
        };
        let thread = std::thread::Builder::new()
            .name("evalctl-sandbox".into())
            .spawn(move || {
                let result = runtime.block_on(bound.serve(async {
                    let _ = stop_rx.await;
                }));
                runtime.shutdown_timeout(Duration::from_millis(100));
                result
            })
            .map_err(SandboxError::Runtime)?;
        Ok(SandboxHandle {
            app,
            addr: local,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }
}

/// A sandbox bound to its address, ready to serve.
#[derive(Debug)]
pub struct Bound {
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    limits: ConnLimits,
    basic: BasicPolicy,
}

impl Bound {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Reads the state it will serve.
    pub fn read_state<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        self.app.inspect(f)
    }

    /// Serves until `shutdown` completes, then lets requests in flight
    /// finish for a short grace period.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), SandboxError> {
        let (fired_tx, fired_rx) = tokio::sync::oneshot::channel::<()>();
        let service = router(self.app)
            .layer(axum::Extension(self.basic))
            .into_make_service_with_connect_info::<ConnInfo>();
        let server = axum::serve(SandboxListener::new(self.listener, self.limits), service)
            .with_graceful_shutdown(async move {
                shutdown.await;
                let _ = fired_tx.send(());
            });
        let grace = async move {
            if fired_rx.await.is_ok() {
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            result = server => result.map_err(SandboxError::Serve),
            () = grace => Ok(()),
        }
    }
}

/// A running in-process sandbox. Dropping it stops the sandbox.
#[derive(Debug)]
pub struct SandboxHandle {
    app: Arc<App>,
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), SandboxError>>>,
}

impl SandboxHandle {
    /// `http://127.0.0.1:<port>`: the base URL to give a client.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far (since the last [`SandboxHandle::clear_log`]).
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.app.requests()
    }

    /// Empties the request log.
    pub fn clear_log(&self) {
        self.app.clear_log();
    }

    /// The faults in effect.
    pub fn faults(&self) -> Faults {
        self.app.faults()
    }

    /// Replaces the faults (from the next request on).
    pub fn set_faults(&self, faults: Faults) {
        self.app.set_faults(faults);
    }

    /// Reads the state.
    pub fn read_state<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        self.app.inspect(f)
    }

    /// Changes the state out of band (as another user of the service
    /// would); persisted like any change when a state file is configured.
    pub fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> Result<R, SandboxError> {
        self.app
            .write_blocking(|s| Ok(f(s)))
            .map_err(SandboxError::StateNotSaved)
    }

    /// Forgets every bearer token issued so far (as a restart does).
    pub fn forget_tokens(&self) {
        self.app.clear_tokens();
    }

    /// Stops the sandbox and waits for its thread.
    pub fn shutdown(mut self) -> Result<(), SandboxError> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Result<(), SandboxError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| {
                Err(SandboxError::Serve(std::io::Error::other(
                    "the sandbox thread panicked",
                )))
            }),
            None => Ok(()),
        }
    }
}

impl Drop for SandboxHandle {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

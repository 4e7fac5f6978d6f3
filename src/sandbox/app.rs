//! What every request handler shares ([`App`]): the one lock around the
//! [`State`], the in-memory bearer tokens, the faults and request log, and
//! the state file. Also the outermost layer of every request
//! ([`fault_layer`]): sequence number, faults, request log.
//!
//! Locks are `std`'s, never held across an `.await`. The state is behind a
//! read-write lock: reads run a closure under the read lock; writes run a
//! closure under the write lock and, when a state file is configured (on a
//! blocking thread), commit what it changed to the database in one
//! transaction before releasing the lock and flush it to disk after, before
//! the answer is sent (see `persist`). A write that fails, in the store or
//! in the database, has what it touched read back from the database.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State as AxState};
use axum::http::{HeaderName, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::conn::ConnInfo;
use super::error::SandboxError;
use super::faults::{CallerSlot, Fault, FaultState, Faults, RequestRecord};
use super::persist::{self, StateDb};
use super::reply::ApiError;
use super::store::State;
use super::validation::with_content_type;

/// The most requests the log keeps; beyond it the oldest tenth is dropped.
pub const REQUEST_LOG_CAP: usize = 100_000;

/// The state shared by all handlers of one sandbox.
#[derive(Debug)]
pub struct App {
    state: RwLock<State>,
    /// Bearer tokens issued by `/login`: fingerprint → user id. In memory
    /// only: a restart invalidates them.
    tokens: Mutex<HashMap<String, String>>,
    faults: Mutex<FaultState>,
    log: Mutex<Vec<RequestRecord>>,
    seq: AtomicU64,
    db: Option<StateDb>,
    /// The header carrying API keys.
    pub api_key_header: HeaderName,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic under the lock cannot leave the state half-changed in a way
    // later requests must not see (closures return errors, not panics), so
    // a poisoned lock is recovered rather than propagated.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

// As for `lock`: a write that fails is undone, so a poisoned lock is
// recovered.
fn read_lock<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_lock<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl App {
    /// A new app over `state`, persisted to `db` when given.
    pub fn new(
        state: State,
        faults: Faults,
        db: Option<StateDb>,
        api_key_header: HeaderName,
    ) -> Result<Self, SandboxError> {
        Ok(App {
            state: RwLock::new(state),
            tokens: Mutex::new(HashMap::new()),
            faults: Mutex::new(FaultState::new(faults)),
            log: Mutex::new(Vec::new()),
            seq: AtomicU64::new(0),
            db,
            api_key_header,
        })
    }

    /// Runs `f` on the state.
    pub fn read<T>(&self, f: impl FnOnce(&State) -> Result<T, ApiError>) -> Result<T, ApiError> {
        f(&read_lock(&self.state))
    }

    /// Runs `f` on the state (for tests and infallible reads).
    pub fn inspect<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&read_lock(&self.state))
    }

    /// Runs `f` on the state and persists what it changed when it succeeds
    /// (see the module docs).
    pub async fn write<T, F>(self: &Arc<Self>, f: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce(&mut State) -> Result<T, ApiError> + Send + 'static,
    {
        if self.db.is_none() {
            return f(&mut write_lock(&self.state));
        }
        let app = Arc::clone(self);
        tokio::task::spawn_blocking(move || app.write_blocking(f))
            .await
            .map_err(|e| ApiError::Internal(format!("write task failed: {e}")))?
    }

    /// The synchronous core of [`App::write`] (also used by tests' out-of-band
    /// changes).
    pub fn write_blocking<T>(
        &self,
        f: impl FnOnce(&mut State) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let mut state = write_lock(&self.state);
        let Some(db) = &self.db else {
            return f(&mut state);
        };
        let not_saved =
            |e: persist::PersistError| ApiError::Internal(format!("state not saved: {e}"));
        let recording = persist::begin(&mut state);
        let out = match f(&mut state) {
            Ok(out) => out,
            Err(e) => {
                // What the store changed before refusing is read back.
                let restored = db.restore(&mut state, recording);
                persist::finish(&mut state);
                restored.map_err(not_saved)?;
                return Err(e);
            }
        };
        let seq = match db.stage(&mut state, &recording) {
            Ok(seq) => seq,
            Err(e) => {
                let _ = db.restore(&mut state, recording);
                persist::finish(&mut state);
                return Err(not_saved(e));
            }
        };
        persist::finish(&mut state);
        // Reads and the next writes go on while the write is committed
        // (with the writes queued meanwhile) and flushed to disk.
        drop(state);
        if let Some(seq) = seq
            && let Err(e) = db.persist(seq)
        {
            db.recover(&mut write_lock(&self.state));
            return Err(not_saved(e));
        }
        Ok(out)
    }

    /// Records a bearer token for a user.
    pub fn add_token(&self, fingerprint: String, user_id: String) {
        lock(&self.tokens).insert(fingerprint, user_id);
    }

    /// The user id of a bearer token's fingerprint.
    pub fn token_user(&self, fingerprint: &str) -> Option<String> {
        lock(&self.tokens).get(fingerprint).cloned()
    }

    /// Forgets every bearer token (as a restart would).
    pub fn clear_tokens(&self) {
        lock(&self.tokens).clear();
    }

    /// The current faults.
    pub fn faults(&self) -> Faults {
        lock(&self.faults).faults().clone()
    }

    /// Replaces the faults.
    pub fn set_faults(&self, faults: Faults) {
        lock(&self.faults).set(faults);
    }

    /// The request log so far (at most [`REQUEST_LOG_CAP`] records).
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.log).clone()
    }

    /// Empties the request log (sequence numbers keep counting).
    pub fn clear_log(&self) {
        lock(&self.log).clear();
    }

    fn record(&self, r: RequestRecord) {
        let mut log = lock(&self.log);
        if log.len() >= REQUEST_LOG_CAP {
            // A long-running sandbox keeps the most recent requests only.
            log.drain(..REQUEST_LOG_CAP / 10);
        }
        log.push(r);
    }
}

/// Logs a request when dropped: with the answer's status when one was
/// sent, with none when the connection was dropped or the client went away
/// before the answer (a spike past its timeout).
struct LogEntry {
    app: Arc<App>,
    record: RequestRecord,
    slot: CallerSlot,
}

impl Drop for LogEntry {
    fn drop(&mut self) {
        let mut record = self.record.clone();
        record.user = self.slot.get();
        tracing::info!(
            target: "evalctl::sandbox",
            seq = record.seq,
            method = %record.method,
            path = %record.path,
            status = record.status,
            fault = ?record.fault,
            user = record.user.as_deref(),
            "request"
        );
        self.app.record(record);
    }
}

/// The outermost layer: numbers the request, applies the faults decided for
/// it, and logs it.
pub async fn fault_layer(
    AxState(app): AxState<Arc<App>>,
    ConnectInfo(conn): ConnectInfo<ConnInfo>,
    mut request: Request,
    next: Next,
) -> Response {
    // No connection timeout applies while the request is in progress.
    let _in_progress = conn.activity.begin_request();
    let seq = app.seq.fetch_add(1, Ordering::SeqCst) + 1;
    let slot = CallerSlot::default();
    request.extensions_mut().insert(slot.clone());
    let path = request.uri().path().to_owned();
    let (decision, retry_after) = {
        let mut faults = lock(&app.faults);
        let d = faults.decide(seq, request.method().as_str(), &path);
        let r = d.fault.map(|f| faults.retry_after(f)).unwrap_or(1);
        (d, r)
    };
    let mut entry = LogEntry {
        app: Arc::clone(&app),
        record: RequestRecord {
            seq,
            method: request.method().to_string(),
            path,
            query: request.uri().query().map(str::to_owned),
            status: None,
            fault: decision.fault,
            spiked: decision.spiked,
            user: None,
        },
        slot,
    };
    // A value that is not text is no JSON media type.
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    // The request runs to completion in its own task, like a real service
    // that keeps processing after the client gave up (a timeout, a dropped
    // connection): a create the client stopped waiting for still lands.
    let work = async move {
        if !decision.delay.is_zero() {
            tokio::time::sleep(decision.delay).await;
        }
        let response = match decision.fault {
            None => with_content_type(content_type.as_deref(), next.run(request)).await,
            Some(fault) => {
                if fault.processes() {
                    // The change is applied; only the answer is lost.
                    let _ = with_content_type(content_type.as_deref(), next.run(request)).await;
                }
                match fault {
                    Fault::Drop | Fault::DropAfter => {
                        conn.kill.trip();
                        Response::new(Body::empty())
                    }
                    Fault::Throttle | Fault::RateLimit => {
                        ApiError::TooManyRequests { retry_after }.into_response()
                    }
                    Fault::FailBefore(code) | Fault::FailAfter(code) => {
                        ApiError::Injected(code).into_response()
                    }
                }
            }
        };
        if !matches!(decision.fault, Some(Fault::Drop | Fault::DropAfter)) {
            entry.record.status = Some(response.status().as_u16());
        }
        drop(entry);
        response
    };
    match tokio::spawn(work).await {
        Ok(response) => response,
        // A handler panicked: answer like a server error, keep serving.
        Err(_) => ApiError::Injected(500).into_response(),
    }
}

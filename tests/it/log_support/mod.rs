//! Captures the log lines one test emits on its own thread, at a level it
//! chooses, without missing any when other tests run in parallel.
//!
//! Why not just `tracing::subscriber::set_default` with a buffer: tracing
//! caches, per call site and for the whole process, whether any subscriber
//! is interested in it. While at most one dispatcher is registered, the
//! first thread to reach a call site computes that interest from *its own*
//! default subscriber only (tracing-core's "just one dispatcher" shortcut).
//! A parallel test without a subscriber reaching, say, the client's "HTTP
//! Basic refused" debug line first caches "never" for it, and the capturing
//! test then sees nothing (it failed in 133 of 200 runs of
//! `it client_auth --test-threads 8`).
//!
//! So before the first capture a global default is installed that is
//! interested in every call site "sometimes" (and enables nothing): with it
//! a call site is never cached as "never", and a second dispatcher is always
//! registered once a capture starts, so interest is combined over every
//! registered subscriber. Each event is then asked of the thread's current
//! subscriber: the capture on the capturing test's thread, nothing elsewhere.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: a failing unwrap is a failing test, with its location

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use tracing::dispatcher::DefaultGuard;
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Level, Metadata, span};

/// The log lines written on the current thread (and the tasks it polls)
/// from [`capture`] until this is dropped.
pub struct LogCapture {
    buffer: Buffer,
    _guard: DefaultGuard,
}

/// Starts capturing, as plain text without colour, every event at `level`
/// or more severe emitted on the current thread. Use it from a
/// current-thread runtime (`#[tokio::test]`), so the code under test runs
/// on this thread.
pub fn capture(level: Level) -> LogCapture {
    keep_interest_dynamic();
    let buffer = Buffer::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(buffer.clone())
        .with_ansi(false)
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    LogCapture {
        buffer,
        _guard: guard,
    }
}

impl LogCapture {
    /// What was logged so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.buffer.0.lock().unwrap().clone()).expect("utf-8 log")
    }
}

/// Installs [`Undecided`] as the global default once. Should something else
/// have installed a global default first, [`Undecided`] is still registered
/// and kept alive, so a capture is never the only registered dispatcher.
fn keep_interest_dynamic() {
    static KEEPER: OnceLock<Option<Dispatch>> = OnceLock::new();
    KEEPER.get_or_init(|| {
        let dispatch = Dispatch::new(Undecided);
        match tracing::dispatcher::set_global_default(dispatch.clone()) {
            Ok(()) => None,
            Err(_) => Some(dispatch),
        }
    });
}

/// A subscriber that is "sometimes" interested in every call site and
/// enables nothing: it keeps call sites from being cached as "never".
struct Undecided;

impl tracing::Subscriber for Undecided {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::OFF)
    }
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        // Never called: no span is enabled.
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Buffer {
    type Writer = Buffer;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

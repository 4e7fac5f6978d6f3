//! The sandbox's listener: TCP connections that the fault layer can cut.
//!
//! Each accepted connection carries a [`ConnInfo`] (remote address and a
//! [`KillSwitch`]) into the request's extensions. Tripping the switch makes
//! every later read of the connection end and every later write fail, so
//! hyper drops the connection without writing a byte: the client sees a
//! connection closed without a response, as after a crash or a network cut.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Cuts one connection.
#[derive(Debug, Clone, Default)]
pub struct KillSwitch(Arc<AtomicBool>);

impl KillSwitch {
    /// Cuts the connection: nothing more is read or written on it.
    pub fn trip(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn tripped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the fault layer knows about a request's connection.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    /// Cuts this connection.
    pub kill: KillSwitch,
}

/// A TCP listener whose connections can be cut.
#[derive(Debug)]
pub struct SandboxListener {
    inner: TcpListener,
}

impl SandboxListener {
    /// Wraps a bound listener.
    pub fn new(inner: TcpListener) -> Self {
        SandboxListener { inner }
    }
}

impl Listener for SandboxListener {
    type Io = CuttableStream;
    type Addr = ConnInfo;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, _remote)) => {
                    let _ = stream.set_nodelay(true);
                    let kill = KillSwitch::default();
                    return (
                        CuttableStream {
                            inner: stream,
                            kill: kill.clone(),
                        },
                        ConnInfo { kill },
                    );
                }
                // Out of file descriptors and the like: back off briefly.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr().map(|_| ConnInfo {
            kill: KillSwitch::default(),
        })
    }
}

impl Connected<IncomingStream<'_, SandboxListener>> for ConnInfo {
    fn connect_info(stream: IncomingStream<'_, SandboxListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// A TCP stream that ends when its [`KillSwitch`] trips.
#[derive(Debug)]
pub struct CuttableStream {
    inner: TcpStream,
    kill: KillSwitch,
}

fn cut() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionReset,
        "connection cut by fault injection",
    )
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.kill.tripped() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.kill.tripped() {
            return Poll::Ready(Err(cut()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.kill.tripped() {
            return Poll::Ready(Err(cut()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.kill.tripped() {
            return Poll::Ready(Err(cut()));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

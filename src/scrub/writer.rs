//! [`MaskingWriter`]: a `Write` adapter that masks held secrets in a stream. It
//! holds back the last bytes written (one byte less than the longest secret form),
//! so a secret that two writes split is seen whole and masked; [`MaskingWriter::finish`]
//! (or dropping it) writes what is held.

use std::io::{self, Write};

use super::{MASK, masker};

/// Bytes gathered before they are scanned, so that many small writes (a renderer
/// writes a plan piece by piece) are scanned in one pass.
const SCAN_AT: usize = 8 << 10;

/// Masks held secrets ([`super::register`]) in what is written through it.
pub struct MaskingWriter<W: Write> {
    inner: Option<W>,
    /// Written to this adapter, not yet to `inner`.
    pending: Vec<u8>,
}

impl<W: Write> MaskingWriter<W> {
    /// A writer masking into `inner`.
    pub fn new(inner: W) -> Self {
        MaskingWriter {
            inner: Some(inner),
            pending: Vec::new(),
        }
    }

    /// Writes what is held back, masked, flushes, and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.drain(true)?;
        let mut inner = self
            .inner
            .take()
            .ok_or_else(|| io::Error::other("the masking writer was already finished"))?;
        inner.flush()?;
        Ok(inner)
    }

    /// Writes out what of `pending` is settled: all of it when `end`, else all but
    /// what may still be the start of a secret that the next write completes.
    fn drain(&mut self, end: bool) -> io::Result<()> {
        let Some(inner) = self.inner.as_mut() else {
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        let Some(masker) = masker() else {
            inner.write_all(&self.pending)?;
            self.pending.clear();
            return Ok(());
        };
        let len = self.pending.len();
        // A secret that starts before `cut` ends within `pending`, if it is there.
        let cut = if end {
            len
        } else {
            len.saturating_sub(masker.longest().saturating_sub(1))
        };
        let mut out = Vec::with_capacity(cut + MASK.len());
        let mut written = 0;
        let mut keep_from = None;
        for (start, stop) in masker.ranges(&self.pending, cut) {
            if stop > cut && !end {
                // Another secret may start within this one and end in the next
                // write: decide once it is seen.
                keep_from = Some(start);
                break;
            }
            out.extend_from_slice(&self.pending[written..start]);
            out.extend_from_slice(MASK.as_bytes());
            written = stop;
        }
        let keep_from = keep_from.unwrap_or_else(|| cut.max(written));
        if keep_from > written {
            out.extend_from_slice(&self.pending[written..keep_from]);
        }
        inner.write_all(&out)?;
        self.pending.drain(..keep_from);
        Ok(())
    }
}

impl<W: Write> Write for MaskingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= SCAN_AT {
            self.drain(false)?;
        }
        Ok(buf.len())
    }

    /// Writes what is settled and flushes it; the last bytes that may begin a
    /// secret stay held until more is written or the writer is finished.
    fn flush(&mut self) -> io::Result<()> {
        self.drain(false)?;
        match self.inner.as_mut() {
            Some(inner) => inner.flush(),
            None => Ok(()),
        }
    }
}

impl<W: Write> Drop for MaskingWriter<W> {
    fn drop(&mut self) {
        // Nowhere to report a failure to: `finish` is the way to see one.
        if self.drain(true).is_ok()
            && let Some(inner) = self.inner.as_mut()
        {
            let _ = inner.flush();
        }
    }
}

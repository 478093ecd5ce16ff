//! The guests' stdin and stdout: in-memory pipes with no task of their own. wasmtime-wasi's async
//! stdio spawns a reader or writer task per stream, so every line between the two interpreters of
//! a run crossed two extra tasks each way; a run makes one such round trip per call the tests make.
//! Here a write lands in the buffer and wakes the one reader directly.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use wasmtime_wasi::cli::{IsTerminal, StdinStream, StdoutStream};
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError};

/// One direction of bytes: written by one side, read by the other.
#[derive(Clone)]
pub struct Pipe(Arc<Mutex<State>>);

struct State {
    chunks: VecDeque<Bytes>,
    closed: bool,
    reader: Option<Waker>,
    /// Bytes accepted so far, and the most it accepts (a guest writing past it is flooding).
    written: usize,
    cap: usize,
}

impl Pipe {
    pub fn new(cap: usize) -> Pipe {
        Pipe(Arc::new(Mutex::new(State {
            chunks: VecDeque::new(),
            closed: false,
            reader: None,
            written: 0,
            cap,
        })))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends bytes; refused once the pipe is closed or past its capacity.
    pub fn push(&self, bytes: Bytes) -> Result<(), StreamError> {
        let mut s = self.state();
        if s.closed {
            return Err(StreamError::Closed);
        }
        if s.written + bytes.len() > s.cap {
            return Err(StreamError::Trap(wasmtime::format_err!("output limit reached")));
        }
        s.written += bytes.len();
        if !bytes.is_empty() {
            s.chunks.push_back(bytes);
        }
        if let Some(w) = s.reader.take() {
            w.wake();
        }
        Ok(())
    }

    /// Starts counting bytes against the cap again (a checker reused for another run).
    pub fn reset_written(&self) {
        self.state().written = 0;
    }

    /// No more bytes will come: the reader sees the end once the buffer is drained.
    pub fn close(&self) {
        let mut s = self.state();
        s.closed = true;
        if let Some(w) = s.reader.take() {
            w.wake();
        }
    }

    /// Up to `max` bytes: `Some(empty)` when nothing is there yet, `None` at the end.
    fn take(&self, max: usize) -> Option<Bytes> {
        let mut s = self.state();
        let closed = s.closed;
        match s.chunks.front_mut() {
            Some(front) if front.len() > max => Some(front.split_to(max)),
            Some(_) => s.chunks.pop_front(),
            None if closed => None,
            None => Some(Bytes::new()),
        }
    }

    fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = self.state();
        if !s.chunks.is_empty() || s.closed {
            Poll::Ready(())
        } else {
            s.reader = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

// The host's ends.

impl AsyncRead for Pipe {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        loop {
            match self.take(buf.remaining()) {
                None => return Poll::Ready(Ok(())),
                Some(bytes) if !bytes.is_empty() => {
                    buf.put_slice(&bytes);
                    return Poll::Ready(Ok(()));
                }
                Some(_) => {
                    if self.poll_readable(cx).is_pending() {
                        return Poll::Pending;
                    }
                }
            }
        }
    }
}

impl AsyncWrite for Pipe {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Poll::Ready(
            self.push(Bytes::copy_from_slice(buf))
                .map(|()| buf.len())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::BrokenPipe, e.to_string())),
        )
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.close();
        Poll::Ready(Ok(()))
    }
}

// The guest's ends.

#[async_trait::async_trait]
impl InputStream for Pipe {
    fn read(&mut self, size: usize) -> Result<Bytes, StreamError> {
        self.take(size).ok_or(StreamError::Closed)
    }
}

#[async_trait::async_trait]
impl Pollable for Pipe {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.poll_readable(cx)).await
    }
}

impl IsTerminal for Pipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for Pipe {
    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncRead + Send + Sync> {
        Box::new(self.clone())
    }
}

impl StdoutStream for Pipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(OutputEnd(self.clone()))
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// The guest's writing end: always ready (a wait on it must not wait for data to arrive).
struct OutputEnd(Pipe);

#[async_trait::async_trait]
impl OutputStream for OutputEnd {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.0.push(bytes)
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        let s = self.0.state();
        if s.closed {
            return Err(StreamError::Closed);
        }
        // At least one byte, so a guest past its limit writes and meets the refusal.
        Ok((s.cap.saturating_sub(s.written)).clamp(1, 1 << 20))
    }
}

#[async_trait::async_trait]
impl Pollable for OutputEnd {
    async fn ready(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn bytes_arrive_in_order_and_the_end_is_seen_after_them() {
        let pipe = Pipe::new(8);
        let mut host = pipe.clone();
        host.write_all(b"abc").await.unwrap();
        let mut guest = pipe.clone();
        assert_eq!(&InputStream::read(&mut guest, 2).unwrap()[..], b"ab");
        assert_eq!(&InputStream::read(&mut guest, 9).unwrap()[..], b"c");
        assert!(InputStream::read(&mut guest, 9).unwrap().is_empty(), "nothing yet is not the end");
        assert!(pipe.push(Bytes::from_static(b"too long!")).is_err(), "past the capacity");
        pipe.push(Bytes::from_static(b"de")).unwrap();
        pipe.close();
        let mut out = Vec::new();
        host.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"de");
        assert!(InputStream::read(&mut guest, 1).is_err(), "closed and drained");
    }
}

//! The binary's edge: the process's stdin and stdout as async streams, and
//! the ways the process is told to stop (a signal, its parent gone).

use std::{pin::Pin, sync::Arc, time::Duration};

use tokio::io::{AsyncRead, AsyncWrite};

use super::{ServeOptions, Stop, serve};
use crate::bridge::Bridge;

/// Serves MCP on stdin/stdout until stdin closes, the parent dies or a
/// termination signal arrives.
pub async fn serve_stdio(bridge: Arc<Bridge>, options: ServeOptions) -> Stop {
    let exit_with_parent = options.exit_with_parent;
    let shutdown = async move {
        tokio::select! {
            _ = parent_gone(exit_with_parent) => Stop::ParentGone,
            name = termination_signal() => Stop::Signal(name),
        }
    };
    serve(stdin_reader(), stdout_writer(), bridge, options, shutdown).await
}

/// Resolves with the signal's name when the process is asked to end, so it
/// ends as it does at stdin EOF: the link closed (and recorded), stdout flushed.
async fn termination_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            (SignalKind::terminate(), "SIGTERM"),
            (SignalKind::interrupt(), "SIGINT"),
            (SignalKind::hangup(), "SIGHUP"),
        ];
        let mut streams = Vec::new();
        for (kind, name) in kinds {
            match signal(kind) {
                Ok(stream) => streams.push((stream, name)),
                Err(e) => tracing::warn!(%e, name, "cannot watch for the signal"),
            }
        }
        if !streams.is_empty() {
            let waits = streams.iter_mut().map(|(stream, name)| {
                Box::pin(async move {
                    stream.recv().await;
                    *name
                })
            });
            return futures_util::future::select_all(waits).await.0;
        }
    }
    #[cfg(not(unix))]
    if tokio::signal::ctrl_c().await.is_ok() {
        return "Ctrl-C";
    }
    std::future::pending().await
}

/// Resolves when the parent process is gone (its pid changes: the orphan
/// was adopted), never when `enabled` is false.
async fn parent_gone(enabled: bool) {
    #[cfg(unix)]
    if enabled {
        let parent = std::os::unix::process::parent_id();
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if std::os::unix::process::parent_id() != parent {
                return;
            }
        }
    }
    let _ = enabled;
    std::future::pending::<()>().await;
}

/// stdin for async reads: when it is a pipe or a socket (as MCP clients
/// start us: Python's and Rust's use pipes, Node's socket pairs), the file
/// itself, non-blocking; otherwise (a terminal, a file) tokio's stdin, whose
/// every read is a trip through a blocking thread (tens of µs per message).
fn stdin_reader() -> Pin<Box<dyn AsyncRead + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(reader) = unix_stdio::reader(std::io::stdin().as_fd()) {
            return reader;
        }
    }
    Box::pin(tokio::io::stdin())
}

/// stdout for async writes, as [`stdin_reader`].
fn stdout_writer() -> Pin<Box<dyn AsyncWrite + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(writer) = unix_stdio::writer(std::io::stdout().as_fd()) {
            return writer;
        }
    }
    Box::pin(tokio::io::stdout())
}

#[cfg(unix)]
mod unix_stdio {
    use std::{
        fs::File,
        io,
        os::{
            fd::{BorrowedFd, OwnedFd},
            unix::fs::FileTypeExt,
        },
        pin::Pin,
    };

    use tokio::io::{AsyncRead, AsyncWrite};

    /// A duplicate of `fd`, and whether it is a pipe (else a socket); `None`
    /// when it is neither.
    fn duplicate(fd: BorrowedFd<'_>) -> Option<(File, bool)> {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let kind = file.metadata().ok()?.file_type();
        (kind.is_fifo() || kind.is_socket()).then_some((file, kind.is_fifo()))
    }

    /// The whole socket (never split: dropping a split write half would
    /// shut down a socket that may be stdout too).
    fn socket(file: File) -> io::Result<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        stream.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(stream)
    }

    pub fn reader(fd: BorrowedFd<'_>) -> Option<Pin<Box<dyn AsyncRead + Send>>> {
        let (file, pipe) = duplicate(fd)?;
        if pipe {
            tokio::net::unix::pipe::Receiver::from_file(file).ok().map(|p| Box::pin(p) as _)
        } else {
            socket(file).ok().map(|s| Box::pin(s) as _)
        }
    }

    pub fn writer(fd: BorrowedFd<'_>) -> Option<Pin<Box<dyn AsyncWrite + Send>>> {
        let (file, pipe) = duplicate(fd)?;
        if pipe {
            tokio::net::unix::pipe::Sender::from_file(file).ok().map(|p| Box::pin(p) as _)
        } else {
            socket(file).ok().map(|s| Box::pin(s) as _)
        }
    }
}

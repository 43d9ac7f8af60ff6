//! The binary's edge: the process's stdin and stdout as async streams, and
//! the ways the process is told to stop (a signal, its parent gone).

use std::{pin::Pin, sync::Arc};

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
    // Windows has no signals: a console's control events are its way of
    // asking a process to end (Ctrl-C, Ctrl-Break, the console closed, the
    // user logging off, the machine shutting down). An agent that ends the
    // bridge with TerminateProcess gives no notice at all; then the client's
    // end of stdin closes and nothing is left to flush.
    #[cfg(windows)]
    {
        use std::future::Future;
        use tokio::signal::windows;
        let mut waits: Vec<Pin<Box<dyn Future<Output = &'static str> + Send>>> = Vec::new();
        macro_rules! watch {
            ($make:path, $name:literal) => {
                match $make() {
                    Ok(mut stream) => waits.push(Box::pin(async move {
                        stream.recv().await;
                        $name
                    })),
                    Err(e) => tracing::warn!(%e, name = $name, "cannot watch for the console event"),
                }
            };
        }
        watch!(windows::ctrl_c, "CTRL_C_EVENT");
        watch!(windows::ctrl_break, "CTRL_BREAK_EVENT");
        watch!(windows::ctrl_close, "CTRL_CLOSE_EVENT");
        watch!(windows::ctrl_logoff, "CTRL_LOGOFF_EVENT");
        watch!(windows::ctrl_shutdown, "CTRL_SHUTDOWN_EVENT");
        if !waits.is_empty() {
            return futures_util::future::select_all(waits).await.0;
        }
    }
    #[cfg(not(any(unix, windows)))]
    if tokio::signal::ctrl_c().await.is_ok() {
        return "Ctrl-C";
    }
    std::future::pending().await
}

/// Resolves when the parent process is gone, never when `enabled` is false.
/// Unix: the pid of the parent changes (the orphan was adopted). Windows: a
/// handle to the parent, opened at start, is signalled (the process ended;
/// holding the handle means a reused pid cannot be mistaken for it).
/// Elsewhere: never; the client's end of stdin closing ends the bridge.
async fn parent_gone(enabled: bool) {
    if enabled {
        #[cfg(unix)]
        {
            let parent = std::os::unix::process::parent_id();
            loop {
                tokio::time::sleep(PARENT_POLL).await;
                if std::os::unix::process::parent_id() != parent {
                    return;
                }
            }
        }
        #[cfg(windows)]
        if let Some(parent) = windows_parent::Parent::open() {
            while !parent.has_exited() {
                tokio::time::sleep(PARENT_POLL).await;
            }
            return;
        }
    }
    std::future::pending::<()>().await;
}

/// How often the parent is looked at: a cheap call, and a parent's death is
/// noticed within a fifth of a second.
#[cfg(any(unix, windows))]
const PARENT_POLL: std::time::Duration = std::time::Duration::from_millis(200);

#[cfg(windows)]
#[allow(unsafe_code)]
mod windows_parent {
    use windows_sys::Win32::{
        Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0},
        System::{
            Diagnostics::ToolHelp::{
                CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
            },
            Threading::{GetCurrentProcessId, OpenProcess, PROCESS_SYNCHRONIZE, WaitForSingleObject},
        },
    };

    /// An open handle to this process's parent.
    pub(super) struct Parent(HANDLE);

    // SAFETY: a process handle may be used and closed from any thread.
    unsafe impl Send for Parent {}
    unsafe impl Sync for Parent {}

    impl Parent {
        /// The parent, or `None` when it cannot be found or opened (it has
        /// already gone, or it is not ours to watch).
        pub(super) fn open() -> Option<Parent> {
            let pid = parent_pid()?;
            // SAFETY: OpenProcess has no preconditions; a null handle is an error.
            let handle = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) };
            (!handle.is_null()).then_some(Parent(handle))
        }

        pub(super) fn has_exited(&self) -> bool {
            // SAFETY: the handle is open until drop; a zero timeout never blocks.
            unsafe { WaitForSingleObject(self.0, 0) == WAIT_OBJECT_0 }
        }
    }

    impl Drop for Parent {
        fn drop(&mut self) {
            // SAFETY: the handle is ours and closed once.
            unsafe { CloseHandle(self.0) };
        }
    }

    /// The parent's pid, from a snapshot of the process table (Windows has
    /// no getppid).
    fn parent_pid() -> Option<u32> {
        // SAFETY: the snapshot handle is checked and closed below; the entry
        // is a plain struct whose size field is set as the API requires.
        unsafe {
            let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
            if snapshot == INVALID_HANDLE_VALUE {
                return None;
            }
            let me = GetCurrentProcessId();
            let mut entry: PROCESSENTRY32W = std::mem::zeroed();
            entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
            let mut found = None;
            let mut more = Process32FirstW(snapshot, &mut entry) != 0;
            while more {
                if entry.th32ProcessID == me {
                    found = Some(entry.th32ParentProcessID);
                    break;
                }
                more = Process32NextW(snapshot, &mut entry) != 0;
            }
            CloseHandle(snapshot);
            found
        }
    }
}

/// stdin for async reads: on Unix, when it is a pipe or a socket (as MCP
/// clients start us: Python's and Rust's use pipes, Node's socket pairs), the
/// file itself, non-blocking; otherwise (a terminal, a file, and always on
/// Windows, whose anonymous pipes cannot be made non-blocking) tokio's stdin,
/// whose every read is a trip through a blocking thread (tens of µs per
/// message).
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

//! What a [`crate::server::Server`] listens on and what it accepts: a TCP
//! port of 127.0.0.1 (the package, uLoopMCP 2.x, and everything else in
//! this crate), or a local socket — uLoopMCP 3's Unix domain socket
//! (`/tmp/uloop/UnityCliLoop-<h>.sock`) or, on Windows, its named pipe
//! (`\\.\pipe\uloop-UnityCliLoop-<h>`); `docs/uloop-3-wire.md` §2–3.
//!
//! The local socket is handled as uLoopMCP 3's Editor handles it
//! (`Packages/src/Editor/Infrastructure/BridgeTransportListener.cs` at
//! hatayama/uLoopMCP c50f54c, branch `v3-beta`):
//!
//! - Unix: the socket's folder is created if missing (no explicit mode), a
//!   socket file already at the path is deleted unconditionally (no
//!   liveness check: a second Editor steals the path), then bind and listen.
//!   Stopping the listener (a quit, a domain reload) deletes the file; a
//!   crash leaves it behind ([`Listener::leave_behind`]). Unlike the Editor,
//!   the fake deletes only a *socket* at the path (never a regular file a
//!   mistyped `--endpoint` names), and only the file it bound itself when it
//!   stops (one a newer listener bound at the same path is left alone).
//! - Windows: one pipe instance waits at a time; a new one is created after
//!   each client connects (`NamedPipeServerStream(..., InOut,
//!   MaxAllowedServerInstances, Byte, Asynchronous)`); no ACL is set.

use std::{fmt, io, net::SocketAddr, pin::Pin, task};

use editor_link::{
    connection::{Connection, Options},
    endpoint::Endpoint,
};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
};

/// Who connected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Peer {
    Tcp(SocketAddr),
    /// A local socket's client, as the Editor keys it: `<endpoint path>#<n>`
    /// (`BridgeTransportListener.cs:110,177`).
    Local(String),
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Peer::Tcp(addr) => addr.fmt(f),
            Peer::Local(name) => f.write_str(name),
        }
    }
}

/// An accepted connection's stream.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    #[cfg(unix)]
    Unix(tokio::net::UnixStream),
    #[cfg(windows)]
    Pipe(tokio::net::windows::named_pipe::NamedPipeServer),
}

impl Stream {
    /// The editor link over this stream.
    pub fn connection(self, options: Options) -> Connection {
        match self {
            Stream::Tcp(stream) => Connection::tcp(stream, options),
            #[cfg(unix)]
            Stream::Unix(stream) => Connection::unix(stream, options),
            #[cfg(windows)]
            Stream::Pipe(pipe) => {
                let (read, write) = tokio::io::split(pipe);
                Connection::new(read, write, options)
            }
        }
    }

    /// The TCP stream, for what only ever listens on TCP (the recorder).
    pub fn into_tcp(self) -> Option<TcpStream> {
        match self {
            Stream::Tcp(stream) => Some(stream),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Waits until the client has sent something (or gone), reading nothing.
    pub async fn wait_for_first_byte(&self) {
        match self {
            Stream::Tcp(stream) => {
                let _ = stream.peek(&mut [0u8; 1]).await;
            }
            #[cfg(unix)]
            Stream::Unix(stream) => {
                let _ = stream.readable().await;
            }
            #[cfg(windows)]
            Stream::Pipe(pipe) => {
                let _ = pipe.readable().await;
            }
        }
    }

    /// Closes with a reset where the transport has one (TCP); else closes.
    pub fn reset(self) {
        if let Stream::Tcp(stream) = &self {
            let _ = stream.set_zero_linger();
        }
        drop(self);
    }
}

macro_rules! each_stream {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Stream::Tcp($s) => $e,
            #[cfg(unix)]
            Stream::Unix($s) => $e,
            #[cfg(windows)]
            Stream::Pipe($s) => $e,
        }
    };
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> task::Poll<io::Result<()>> {
        each_stream!(self, s => Pin::new(s).poll_read(cx, buf))
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut task::Context<'_>, buf: &[u8]) -> task::Poll<io::Result<usize>> {
        each_stream!(self, s => Pin::new(s).poll_write(cx, buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> task::Poll<io::Result<()>> {
        each_stream!(self, s => Pin::new(s).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> task::Poll<io::Result<()>> {
        each_stream!(self, s => Pin::new(s).poll_shutdown(cx))
    }
}

/// What a server listens on.
#[derive(Debug)]
pub enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(UnixSocket),
    #[cfg(windows)]
    Pipe(PipeListener),
}

impl From<TcpListener> for Listener {
    fn from(listener: TcpListener) -> Listener {
        Listener::Tcp(listener)
    }
}

impl Listener {
    /// Listens on a local endpoint: a Unix socket path or a pipe name (what
    /// a TCP endpoint is not).
    pub fn bind_local(endpoint: &Endpoint) -> io::Result<Listener> {
        match endpoint {
            #[cfg(unix)]
            Endpoint::Unix(path) => UnixSocket::bind(path).map(Listener::Unix),
            #[cfg(windows)]
            Endpoint::Pipe(name) => PipeListener::bind(name).map(Listener::Pipe),
            other => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{other}: not a local endpoint of this platform"),
            )),
        }
    }

    /// The TCP port listened on; 0 for a local socket.
    pub fn port(&self) -> u16 {
        match self {
            Listener::Tcp(listener) => listener.local_addr().map(|a| a.port()).unwrap_or(0),
            #[allow(unreachable_patterns)]
            _ => 0,
        }
    }

    /// Where it listens.
    pub fn endpoint(&self) -> Endpoint {
        match self {
            Listener::Tcp(listener) => {
                Endpoint::Tcp(listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0))))
            }
            #[cfg(unix)]
            Listener::Unix(socket) => Endpoint::Unix(socket.path.clone()),
            #[cfg(windows)]
            Listener::Pipe(pipe) => Endpoint::Pipe(pipe.name.clone()),
        }
    }

    /// The TCP listener, for what only listens on TCP (a held port).
    pub fn into_tcp(self) -> Option<TcpListener> {
        match self {
            Listener::Tcp(listener) => Some(listener),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Accepts the next client. `number` is the server's count for it (a
    /// local client is named after it, as the Editor names its clients).
    pub async fn accept(&mut self, number: u64) -> io::Result<(Stream, Peer)> {
        match self {
            Listener::Tcp(listener) => listener.accept().await.map(|(s, peer)| (Stream::Tcp(s), Peer::Tcp(peer))),
            #[cfg(unix)]
            Listener::Unix(socket) => {
                let (stream, _) = socket.listener.accept().await?;
                Ok((Stream::Unix(stream), Peer::Local(format!("{}#{number}", socket.path.display()))))
            }
            #[cfg(windows)]
            Listener::Pipe(pipe) => {
                let stream = pipe.accept().await?;
                Ok((Stream::Pipe(stream), Peer::Local(format!("{}#{number}", pipe.name))))
            }
        }
    }

    /// Closes the listener as a dying process does: a Unix socket file stays
    /// behind (stale: connecting to it is refused) until the next Editor
    /// deletes it before binding (`docs/uloop-3-wire.md` §8, Editor quit).
    pub fn leave_behind(self) {
        match self {
            #[cfg(unix)]
            Listener::Unix(mut socket) => {
                socket.identity = None;
                drop(socket);
            }
            other => drop(other),
        }
    }
}

/// A listening Unix domain socket; its file is deleted when it is dropped
/// (unless [`Listener::leave_behind`] was used).
#[cfg(unix)]
#[derive(Debug)]
pub struct UnixSocket {
    listener: tokio::net::UnixListener,
    path: std::path::PathBuf,
    /// The bound file's device and inode: only that file is deleted.
    identity: Option<(u64, u64)>,
}

/// uLoopMCP 3's listen backlog on a Unix socket.
#[cfg(unix)]
const ULOOP3_BACKLOG: u32 = 100;

#[cfg(unix)]
impl UnixSocket {
    /// `BridgeTransportListener.Start` (lines 74-90): the folder created if
    /// missing, a socket already there deleted, bind, listen.
    pub fn bind(path: &std::path::Path) -> io::Result<UnixSocket> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)?,
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{}: exists and is not a socket; not deleted", path.display()),
                ));
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
        // uLoopMCP 3 listens with a backlog of 100 (`listen(100)`,
        // docs/uloop-3-wire.md §8): a burst past it while the Editor does
        // not accept (a saturated thread pool) fails to connect at once.
        let socket = tokio::net::UnixSocket::new_stream()?;
        socket.bind(path)?;
        let listener = socket.listen(ULOOP3_BACKLOG)?;
        let identity = std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()));
        Ok(UnixSocket { listener, path: path.to_owned(), identity })
    }
}

#[cfg(unix)]
impl Drop for UnixSocket {
    /// `BridgeTransportListener.Stop` (lines 114-122): the socket file deleted.
    fn drop(&mut self) {
        use std::os::unix::fs::MetadataExt;
        let Some(identity) = self.identity else { return };
        let ours = std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == identity);
        if ours {
            if let Err(err) = std::fs::remove_file(&self.path) {
                tracing::warn!(%err, path = %self.path.display(), "cannot delete the socket file");
            }
        }
    }
}

/// A named pipe's listener: the instance waiting for the next client.
#[cfg(windows)]
#[derive(Debug)]
pub struct PipeListener {
    name: String,
    waiting: tokio::net::windows::named_pipe::NamedPipeServer,
}

#[cfg(windows)]
impl PipeListener {
    pub fn bind(name: &str) -> io::Result<PipeListener> {
        let waiting = tokio::net::windows::named_pipe::ServerOptions::new().create(name)?;
        Ok(PipeListener { name: name.to_owned(), waiting })
    }

    /// `AcceptClient` (lines 145-192): wait for a client on the waiting
    /// instance, then create the next one.
    async fn accept(&mut self) -> io::Result<tokio::net::windows::named_pipe::NamedPipeServer> {
        self.waiting.connect().await?;
        let next = tokio::net::windows::named_pipe::ServerOptions::new().create(&self.name)?;
        Ok(std::mem::replace(&mut self.waiting, next))
    }
}

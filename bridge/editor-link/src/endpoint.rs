//! Where an Editor listens.
//!
//! uLoopMCP 2.x and this project's package listen on a TCP port of
//! 127.0.0.1 (found through discovery, §7). uLoopMCP 3 ("Unity CLI Loop";
//! its branch `v3-beta` at c50f54c, `docs/uloop-3-wire.md`) listens on a
//! Unix domain socket `/tmp/uloop/UnityCliLoop-<h>.sock` or, on Windows, the
//! named pipe `\\.\pipe\uloop-UnityCliLoop-<h>`, where `<h>` is the first 16
//! lowercase hex digits of the SHA-256 of the project root, canonicalised as
//! the Editor's C# does it (`ProjectRootCanonicalizer`): the full path with
//! symlinks resolved (`realpath`: on macOS `/tmp/…` is `/private/tmp/…`;
//! Windows: the final path name, its `\\?\` prefix stripped), trailing
//! separators trimmed, native separators, no case folding. The same string
//! goes in each request's `x-uloop.expectedProjectRoot`, which the Editor
//! compares byte for byte.
//!
//! v3 has no token: whoever can put a socket at that path can pose as the
//! Editor. [`check_socket`] refuses a socket another user owns or could
//! have put there; [`check_pipe`] refuses a pipe served by a process of
//! another user (any user can create a pipe of that name first: the Editor
//! makes its pipe with the default security, and a pipe's name is not owned).

use std::{
    fmt, io,
    net::SocketAddr,
    path::{Path, PathBuf},
};

/// The folder of uLoopMCP 3's sockets (fixed: not `$TMPDIR`).
pub const ULOOP3_SOCKET_DIR: &str = "/tmp/uloop";

/// Where an Editor listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Tcp(SocketAddr),
    /// A Unix domain socket (uLoopMCP 3 on macOS and Linux).
    Unix(PathBuf),
    /// A Windows named pipe, by its full name (`\\.\pipe\…`).
    Pipe(String),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp(addr) => write!(f, "tcp://{addr}"),
            Endpoint::Unix(path) => write!(f, "unix:{}", path.display()),
            Endpoint::Pipe(name) => write!(f, "pipe:{name}"),
        }
    }
}

impl std::str::FromStr for Endpoint {
    type Err = String;

    /// `tcp://HOST:PORT`, `unix:PATH` or `pipe:NAME` (a bare name gets the
    /// `\\.\pipe\` prefix).
    fn from_str(text: &str) -> Result<Endpoint, String> {
        if let Some(addr) = text.strip_prefix("tcp://") {
            return addr.parse().map(Endpoint::Tcp).map_err(|e| format!("{text}: {e}"));
        }
        if let Some(path) = text.strip_prefix("unix:") {
            return match path {
                "" => Err("unix: needs the socket's path".into()),
                path => Ok(Endpoint::Unix(PathBuf::from(path))),
            };
        }
        if let Some(name) = text.strip_prefix("pipe:") {
            return match name {
                "" => Err("pipe: needs the pipe's name".into()),
                name if name.starts_with(r"\\") => Ok(Endpoint::Pipe(name.to_owned())),
                name => Ok(Endpoint::Pipe(format!(r"\\.\pipe\{name}"))),
            };
        }
        Err(format!("{text}: not an endpoint (tcp://HOST:PORT, unix:PATH or pipe:NAME)"))
    }
}

/// The project root as uLoopMCP 3's Editor writes it: what its endpoint's
/// name is made from and what `x-uloop.expectedProjectRoot` must equal.
pub fn canonical_project_root(project: &Path) -> io::Result<String> {
    let resolved = std::fs::canonicalize(project)?;
    let text = resolved.to_str().ok_or_else(|| io::Error::other("the project path is not UTF-8"))?;
    Ok(trim_trailing_separators(&strip_verbatim(text)))
}

/// `\\?\C:\p` is `C:\p`; `\\?\UNC\server\share` is `\\server\share` (what
/// the Editor strips from `GetFinalPathNameByHandleW`).
fn strip_verbatim(path: &str) -> String {
    if let Some(unc) = path.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{unc}")
    } else if let Some(local) = path.strip_prefix(r"\\?\") {
        local.to_owned()
    } else {
        path.to_owned()
    }
}

/// Trailing `/` and `\` trimmed, a root (`/`, `C:\`) kept.
fn trim_trailing_separators(path: &str) -> String {
    let trimmed = path.trim_end_matches(['/', '\\']);
    let is_drive = trimmed.len() == 2 && trimmed.ends_with(':');
    match (trimmed.is_empty(), is_drive) {
        (true, _) => path.get(..1).unwrap_or("").to_owned(),
        (false, true) => path.get(..3).unwrap_or(trimmed).to_owned(),
        (false, false) => trimmed.to_owned(),
    }
}

/// `UnityCliLoop-<first 16 lowercase hex digits of SHA-256(root)>`.
pub fn uloop3_endpoint_name(canonical_root: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(canonical_root.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("UnityCliLoop-{hex}")
}

/// Where a uLoopMCP 3 Editor with `canonical_root` open listens on this
/// platform.
pub fn uloop3_endpoint(canonical_root: &str) -> Endpoint {
    let name = uloop3_endpoint_name(canonical_root);
    if cfg!(windows) {
        Endpoint::Pipe(format!(r"\\.\pipe\uloop-{name}"))
    } else {
        Endpoint::Unix(Path::new(ULOOP3_SOCKET_DIR).join(format!("{name}.sock")))
    }
}

/// Why a socket is not trusted to be the Editor's.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Untrusted {
    #[error("{path}: not there")]
    Missing { path: String },
    #[error("{path}: a symbolic link, not the Editor's socket")]
    Link { path: String },
    #[error("{path}: not a socket")]
    NotASocket { path: String },
    #[error("{path}: owned by another user (uid {owner}), so it may not be your Editor")]
    OtherOwner { path: String, owner: u32 },
    #[error(
        "{dir}: owned by another user (uid {owner}) or writable by others, so another user could have put the socket there"
    )]
    SharedFolder { dir: String, owner: u32 },
    #[error("{name}: served by process {pid} of another user ({server}; you are {me}), so it may not be your Editor")]
    PipeOfAnotherUser { name: String, pid: u32, server: String, me: String },
    #[error(
        "{name}: cannot tell which user serves it ({why}), so it may not be your Editor; an Editor run as administrator needs the bridge run as administrator too"
    )]
    PipeServerUnknown { name: String, why: String },
}

/// The verdict on a named pipe from what Windows said of it: the pid of the
/// process serving it, that process's user and ours (SIDs as text, `S-1-5-…`).
/// Apart from [`check_pipe`] so that every branch is tested on every platform.
pub fn pipe_verdict(
    name: &str,
    pid: io::Result<u32>,
    server: impl FnOnce(u32) -> io::Result<String>,
    me: io::Result<String>,
) -> Result<(), Untrusted> {
    let unknown =
        |what: &str, e: io::Error| Untrusted::PipeServerUnknown { name: name.into(), why: format!("{what}: {e}") };
    let pid = pid.map_err(|e| unknown("its server's process id", e))?;
    let me = me.map_err(|e| unknown("this process's user", e))?;
    let server = server(pid).map_err(|e| unknown(&format!("the user of process {pid}"), e))?;
    match server == me {
        true => Ok(()),
        false => Err(Untrusted::PipeOfAnotherUser { name: name.into(), pid, server, me }),
    }
}

/// Whether the named pipe just opened (`pipe`, named `name`) is served by a
/// process of this user: Windows says which process serves a pipe's
/// instance, and that process's token says its user.
#[cfg(windows)]
pub fn check_pipe(pipe: &impl std::os::windows::io::AsRawHandle, name: &str) -> Result<(), Untrusted> {
    let handle = pipe.as_raw_handle();
    pipe_verdict(name, pipe_owner::server_pid(handle), pipe_owner::process_user, pipe_owner::current_user())
}

/// The Win32 calls behind [`check_pipe`]. Unsafe code, allowed here only:
/// windows-sys is bindings and no crate we depend on wraps these four calls.
/// Each handle is closed once (by [`Handle`]'s drop), each buffer outlives
/// the calls that read it, and `LocalFree` frees what
/// `ConvertSidToStringSidW` allocated.
#[cfg(windows)]
#[allow(unsafe_code)]
mod pipe_owner {
    use std::{io, os::windows::io::RawHandle};
    use windows_sys::Win32::{
        Foundation::{CloseHandle, HANDLE, LocalFree},
        Security::{
            Authorization::ConvertSidToStringSidW, GetTokenInformation, PSID, TOKEN_QUERY, TOKEN_USER, TokenUser,
        },
        System::{
            Pipes::GetNamedPipeServerProcessId,
            Threading::{GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION},
        },
    };

    /// A handle this module opened, closed on drop.
    struct Handle(HANDLE);
    impl Drop for Handle {
        fn drop(&mut self) {
            // SAFETY: opened by this module, closed only here.
            unsafe { CloseHandle(self.0) };
        }
    }

    pub(super) fn server_pid(pipe: RawHandle) -> io::Result<u32> {
        let mut pid = 0u32;
        // SAFETY: `pipe` is the open client end of a pipe, borrowed for the call.
        match unsafe { GetNamedPipeServerProcessId(pipe as HANDLE, &mut pid) } {
            0 => Err(io::Error::last_os_error()),
            _ => Ok(pid),
        }
    }

    pub(super) fn process_user(pid: u32) -> io::Result<String> {
        // SAFETY: no pointers; a null handle is an error.
        let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if process.is_null() {
            return Err(io::Error::last_os_error());
        }
        token_user(&Handle(process))
    }

    pub(super) fn current_user() -> io::Result<String> {
        // SAFETY: a pseudo-handle, never closed.
        token_user_of(unsafe { GetCurrentProcess() })
    }

    fn token_user(process: &Handle) -> io::Result<String> {
        token_user_of(process.0)
    }

    /// The user (its SID as text) of `process`'s token.
    fn token_user_of(process: HANDLE) -> io::Result<String> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: `process` is open; `token` receives a handle we close.
        if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let token = Handle(token);
        let mut len = 0u32;
        // SAFETY: asks the size only (a null buffer of length 0).
        unsafe { GetTokenInformation(token.0, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        if len == 0 {
            return Err(io::Error::last_os_error());
        }
        // u64s: aligned for TOKEN_USER's pointer.
        let mut buffer = vec![0u64; (len as usize).div_ceil(8)];
        // SAFETY: `buffer` holds `len` bytes.
        if unsafe { GetTokenInformation(token.0, TokenUser, buffer.as_mut_ptr().cast(), len, &mut len) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: Windows wrote a TOKEN_USER at the buffer's start; its SID
        // points into the buffer, alive until the end of this function.
        let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
        sid_text(sid)
    }

    fn sid_text(sid: PSID) -> io::Result<String> {
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: `sid` is valid; Windows allocates `text`, freed below.
        if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `text` is NUL-terminated; read up to the NUL, then freed once.
        let shown = unsafe {
            let len = (0..).take_while(|&i| *text.add(i) != 0).count();
            let shown = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
            LocalFree(text.cast());
            shown
        };
        Ok(shown)
    }
}

/// Whether the Unix socket at `path` can be trusted to be an Editor of this
/// user: a socket (not a link), owned by this user, in a folder that only
/// this user (or root, sticky) can write to. uLoopMCP 3 sends no token and
/// its folder (`/tmp/uloop`) is shared by every user of the machine.
#[cfg(unix)]
pub fn check_socket(path: &Path) -> Result<(), Untrusted> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
    let shown = path.display().to_string();
    let me = nix::unistd::geteuid().as_raw();
    let meta = std::fs::symlink_metadata(path).map_err(|_| Untrusted::Missing { path: shown.clone() })?;
    if meta.file_type().is_symlink() {
        return Err(Untrusted::Link { path: shown });
    }
    if !meta.file_type().is_socket() {
        return Err(Untrusted::NotASocket { path: shown });
    }
    if meta.uid() != me {
        return Err(Untrusted::OtherOwner { path: shown, owner: meta.uid() });
    }
    if let Some(dir) = path.parent() {
        let folder =
            std::fs::symlink_metadata(dir).map_err(|_| Untrusted::Missing { path: dir.display().to_string() })?;
        let mode = folder.permissions().mode();
        let others_write = mode & 0o022 != 0;
        let sticky = mode & 0o1000 != 0;
        let trusted = folder.file_type().is_dir()
            && (folder.uid() == me || folder.uid() == 0)
            && (!others_write || (sticky && folder.uid() == 0));
        if !trusted {
            return Err(Untrusted::SharedFolder { dir: dir.display().to_string(), owner: folder.uid() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_trusted_only_when_its_server_is_of_this_user() {
        let me = || Ok::<_, io::Error>("S-1-5-21-1-2-3-1001".to_owned());
        let denied = || io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(pipe_verdict("p", Ok(7), |_| me(), me()), Ok(()));
        let other = pipe_verdict("p", Ok(7), |_| Ok("S-1-5-21-1-2-3-1002".into()), me()).unwrap_err();
        assert!(matches!(&other, Untrusted::PipeOfAnotherUser { pid: 7, .. }), "{other}");
        assert!(
            other.to_string().contains("process 7 of another user (S-1-5-21-1-2-3-1002; you are S-1-5-21-1-2-3-1001)")
        );
        // Every step Windows may refuse is a refusal, never a pass.
        for verdict in [
            pipe_verdict("p", Err(denied()), |_| me(), me()),
            pipe_verdict("p", Ok(7), |_| Err(denied()), me()),
            pipe_verdict("p", Ok(7), |_| me(), Err(denied())),
        ] {
            assert!(matches!(verdict, Err(Untrusted::PipeServerUnknown { .. })), "{verdict:?}");
        }
        let why = pipe_verdict("p", Ok(7), |_| Err(denied()), me()).unwrap_err().to_string();
        assert!(why.contains("the user of process 7") && why.contains("administrator"), "{why}");
    }

    /// The Win32 route itself (run by the Windows CI job): a pipe this
    /// process serves is served by this process, of this user.
    #[cfg(windows)]
    #[tokio::test]
    async fn a_pipe_this_user_serves_is_trusted() {
        use tokio::net::windows::named_pipe::{ClientOptions, ServerOptions};
        let name = format!(r"\\.\pipe\editor-link-test-{}", std::process::id());
        let _server = ServerOptions::new().first_pipe_instance(true).create(&name).unwrap();
        let client = ClientOptions::new().open(&name).unwrap();
        use std::os::windows::io::AsRawHandle;
        assert_eq!(pipe_owner::server_pid(client.as_raw_handle()).unwrap(), std::process::id());
        assert_eq!(check_pipe(&client, &name), Ok(()));
    }

    #[test]
    fn endpoint_names_are_those_uloop_3_computes() {
        // docs/uloop-3-wire.md §2, checked with sha256sum.
        for (root, hash) in [
            ("/tmp/MyProject", "85a51b14853547e4"),
            ("/private/tmp/MyProject", "b5b4630c01c47914"),
            ("/home/alice/MyGame", "1b2c8edbbdf4bf5a"),
            ("/Users/alice/Projects/MyGame", "cba886b683706c78"),
            (r"C:\Users\alice\MyGame", "55adf6bf7ed1fcd0"),
        ] {
            assert_eq!(uloop3_endpoint_name(root), format!("UnityCliLoop-{hash}"), "{root}");
        }
        if cfg!(unix) {
            assert_eq!(
                uloop3_endpoint("/home/alice/MyGame"),
                Endpoint::Unix("/tmp/uloop/UnityCliLoop-1b2c8edbbdf4bf5a.sock".into())
            );
        }
    }

    #[test]
    fn roots_are_written_as_the_editor_writes_them() {
        assert_eq!(strip_verbatim(r"\\?\C:\Users\a\Game"), r"C:\Users\a\Game");
        assert_eq!(strip_verbatim(r"\\?\UNC\server\share\Game"), r"\\server\share\Game");
        assert_eq!(trim_trailing_separators("/home/a/Game/"), "/home/a/Game");
        assert_eq!(trim_trailing_separators(r"C:\Game\\"), r"C:\Game");
        assert_eq!(trim_trailing_separators("/"), "/");
        assert_eq!(trim_trailing_separators(r"C:\"), r"C:\");
        let project = tempfile::tempdir().unwrap();
        let root = canonical_project_root(&project.path().join(".")).unwrap();
        assert!(!root.starts_with(r"\\?\") && !root.ends_with(['/', '\\']), "{root}");
        assert_eq!(std::fs::canonicalize(&root).unwrap(), std::fs::canonicalize(project.path()).unwrap());
        #[cfg(unix)]
        {
            // Through a link, the linked-to folder (the Editor resolves it).
            let link = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(project.path(), link.path().join("game")).unwrap();
            assert_eq!(canonical_project_root(&link.path().join("game/")).unwrap(), root);
        }
    }

    #[test]
    fn endpoints_parse_and_print() {
        for text in ["tcp://127.0.0.1:8700", "unix:/tmp/uloop/x.sock", r"pipe:\\.\pipe\uloop-x"] {
            assert_eq!(text.parse::<Endpoint>().unwrap().to_string(), text);
        }
        assert_eq!("pipe:uloop-x".parse::<Endpoint>(), Ok(Endpoint::Pipe(r"\\.\pipe\uloop-x".into())));
        assert!("unix:".parse::<Endpoint>().is_err());
        assert!("8700".parse::<Endpoint>().is_err());
    }

    #[cfg(unix)]
    #[test]
    fn only_a_socket_this_user_owns_in_a_folder_only_it_writes_is_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let socket = dir.path().join("UnityCliLoop-x.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        assert_eq!(check_socket(&socket), Ok(()));
        assert!(matches!(check_socket(&dir.path().join("none.sock")), Err(Untrusted::Missing { .. })));
        let file = dir.path().join("plain");
        std::fs::write(&file, b"").unwrap();
        assert!(matches!(check_socket(&file), Err(Untrusted::NotASocket { .. })));
        let link = dir.path().join("link.sock");
        std::os::unix::fs::symlink(&socket, &link).unwrap();
        assert!(matches!(check_socket(&link), Err(Untrusted::Link { .. })));
        // A folder anyone may write to: anyone could have put it there.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(check_socket(&socket), Err(Untrusted::SharedFolder { .. })));
    }
}

//! Waking the moment an Editor publishes itself again: the folders of the
//! project's discovery files are watched (Linux: inotify), so a reload's end
//! is seen when the file is renamed into place, at no CPU cost while the
//! Editor is away. Where there is no watch (another platform, a folder that
//! does not exist yet), the supervisor's cheap `stat` polling does the job.

use std::path::{Path, PathBuf};

/// What tells that a file was rewritten: its modification time and length
/// (`None` while it does not exist).
pub(super) type Stamp = Option<(u64, u64)>;

/// The stamps of `files`, for the supervisor's polling.
pub(super) fn stamps(files: &[PathBuf]) -> Vec<Stamp> {
    files.iter().map(|f| stamp(f)).collect()
}

#[cfg(not(windows))]
fn stamp(file: &Path) -> Stamp {
    let meta = std::fs::metadata(file).ok()?;
    let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    Some((modified.map_or(0, |d| d.as_nanos() as u64), meta.len()))
}

/// Read from the folder's entry (FindFirstFileExW), never by opening the
/// file: `fs::metadata` opens it, and a rename over a file someone has open
/// fails on Windows with access denied, so a bridge polling every
/// millisecond through a reload would keep the Editor from publishing
/// itself again (seen under Wine: the discovery file stuck at "reloading").
#[cfg(windows)]
#[allow(unsafe_code)]
fn stamp(file: &Path) -> Stamp {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::{
        Foundation::INVALID_HANDLE_VALUE,
        Storage::FileSystem::{FindClose, FindExInfoBasic, FindExSearchNameMatch, FindFirstFileExW, WIN32_FIND_DATAW},
    };
    let wide: Vec<u16> = file.as_os_str().encode_wide().chain(Some(0)).collect();
    // SAFETY: `wide` is NUL-terminated; `data` is a plain struct the call
    // fills; the search handle is closed at once.
    unsafe {
        let mut data: WIN32_FIND_DATAW = std::mem::zeroed();
        let search = FindFirstFileExW(
            wide.as_ptr(),
            FindExInfoBasic,
            (&raw mut data).cast(),
            FindExSearchNameMatch,
            std::ptr::null(),
            0,
        );
        if search == INVALID_HANDLE_VALUE {
            return None;
        }
        FindClose(search);
        let join = |high: u32, low: u32| (u64::from(high) << 32) | u64::from(low);
        Some((
            join(data.ftLastWriteTime.dwHighDateTime, data.ftLastWriteTime.dwLowDateTime),
            join(data.nFileSizeHigh, data.nFileSizeLow),
        ))
    }
}

/// A watch on the folders of some files.
pub(super) struct FolderWatch {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fd: tokio::io::unix::AsyncFd<linux::Fd>,
}

impl FolderWatch {
    /// Watches the folders (that exist) of `files` for files written or
    /// renamed into them; `None` where that cannot be done.
    pub(super) fn new(files: &[PathBuf]) -> Option<FolderWatch> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let fd = linux::watch(files)?;
            // SAFETY: the Inotify owns its descriptor, open until it is
            // dropped with the AsyncFd, and `as_raw_fd` always returns it.
            #[allow(unsafe_code)]
            let fd = unsafe { tokio::io::unix::AsyncFd::register(fd) }.ok()?;
            Some(FolderWatch { fd })
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = files;
            None
        }
    }

    /// Waits for the next change (any of them: the caller looks again).
    pub(super) async fn changed(&self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        loop {
            let Ok(mut ready) = self.fd.readable().await else {
                // The watch broke: never wake (the polling goes on).
                return std::future::pending().await;
            };
            match ready.get_inner().0.read_events() {
                Ok(events) if !events.is_empty() => return,
                Ok(_) | Err(nix::errno::Errno::EAGAIN) => ready.clear_ready(),
                Err(_) => return std::future::pending().await,
            }
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        std::future::pending::<()>().await
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux {
    use std::{
        os::fd::{AsFd, AsRawFd, RawFd},
        path::PathBuf,
    };

    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

    /// The inotify instance, as tokio wants a file descriptor.
    pub(super) struct Fd(pub Inotify);

    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0.as_fd().as_raw_fd()
        }
    }

    pub(super) fn watch(files: &[PathBuf]) -> Option<Fd> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        // A file renamed into place (an atomic write) or written in place.
        let flags = AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CLOSE_WRITE | AddWatchFlags::IN_CREATE;
        let mut watched = 0;
        for folder in files.iter().filter_map(|f| f.parent()) {
            if inotify.add_watch(folder, flags).is_ok() {
                watched += 1;
            }
        }
        (watched > 0).then_some(Fd(inotify))
    }
}

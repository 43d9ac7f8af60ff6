//! Waking the moment an Editor publishes itself again: the folders of the
//! project's discovery files are watched (Linux: inotify), so a reload's end
//! is seen when the file is renamed into place, at no CPU cost while the
//! Editor is away. Where there is no watch (another platform, a folder that
//! does not exist yet), the supervisor's cheap `stat` polling does the job.

use std::path::PathBuf;

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

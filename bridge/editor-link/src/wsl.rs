//! The bridge inside WSL 2 in front of a Unity Editor on Windows.
//!
//! - **Paths.** Windows drives are mounted at `/mnt/<drive>/`: the project
//!   `/mnt/c/Users/me/Game` is the Windows project `C:/Users/me/Game`, which
//!   is how the Editor names it (discovery files, `DataPath`).
//! - **Processes.** A Windows process's id means nothing inside WSL: whether
//!   the Editor named in a project on a Windows drive is alive cannot be
//!   told here, and the connection decides.
//! - **Addresses.** Unity listens on Windows' loopback. With WSL's mirrored
//!   networking (`networkingMode=mirrored`, Windows 11 22H2 and later)
//!   `127.0.0.1` inside WSL is that loopback; in the default NAT mode it is
//!   not, and no Editor can be reached until the mode is changed.
//!
//! Detection reads `WSL_DISTRO_NAME` / `/proc/sys/fs/binfmt_misc/WSLInterop`
//! and asks `wslinfo --networking-mode`; `UNITY_MCP_WSL` (`nat`,
//! `mirrored`, `off`) overrides both, for tests and for a `wslinfo` that is
//! too old to say.

use std::path::{Component, Path, PathBuf};

/// The variable that overrides detection.
pub const WSL_VARIABLE: &str = "UNITY_MCP_WSL";

/// Where WSL mounts Windows drives (`/etc/wsl.conf` `automount.root`; the
/// default is by far the most common).
pub const MOUNT_ROOT: &str = "/mnt";

/// WSL's networking mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Networking {
    /// Windows' loopback is WSL's: the Editor is reachable.
    Mirrored,
    /// A virtual network: Windows' `127.0.0.1` is not reachable from WSL.
    Nat,
    /// `wslinfo` could not say.
    Unknown,
}

/// The WSL the bridge runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wsl {
    pub networking: Networking,
}

impl Wsl {
    /// The WSL this process runs in, if any (found out once).
    pub fn detect() -> Option<Wsl> {
        static DETECTED: std::sync::OnceLock<Option<Wsl>> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(Self::find_out)
    }

    fn find_out() -> Option<Wsl> {
        match std::env::var(WSL_VARIABLE).ok().as_deref() {
            Some("nat") => return Some(Wsl { networking: Networking::Nat }),
            Some("mirrored") => return Some(Wsl { networking: Networking::Mirrored }),
            Some("off") => return None,
            _ => {}
        }
        if !cfg!(target_os = "linux") {
            return None;
        }
        let inside =
            std::env::var_os("WSL_DISTRO_NAME").is_some() || Path::new("/proc/sys/fs/binfmt_misc/WSLInterop").exists();
        if !inside {
            return None;
        }
        let said = std::process::Command::new("wslinfo")
            .arg("--networking-mode")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_ascii_lowercase());
        Some(Wsl { networking: networking_from(said.as_deref()) })
    }

    /// What to tell a user whose Editor cannot be reached from here, if the
    /// networking mode is why.
    pub fn advice(self) -> Option<&'static str> {
        match self.networking {
            Networking::Mirrored => None,
            Networking::Nat => Some(
                "The bridge runs in WSL 2 in NAT networking mode, where 127.0.0.1 is not Windows' loopback, on which Unity listens: set networkingMode=mirrored under [wsl2] in %UserProfile%\\.wslconfig (Windows 11 22H2 or later), run `wsl --shutdown`, and start the agent again; or run the bridge on Windows (unity-mcp-bridge.exe) and let the agent call it from WSL",
            ),
            Networking::Unknown => Some(
                "The bridge runs in WSL 2 and could not tell its networking mode (wslinfo --networking-mode): Unity listens on Windows' loopback, which WSL reaches only with networkingMode=mirrored in %UserProfile%\\.wslconfig",
            ),
        }
    }
}

fn networking_from(said: Option<&str>) -> Networking {
    match said {
        Some("mirrored") => Networking::Mirrored,
        Some("nat") => Networking::Nat,
        _ => Networking::Unknown,
    }
}

/// The Windows path of `path` when it is on a mounted Windows drive
/// (`/mnt/c/Users/me/Game` → `C:/Users/me/Game`), as Unity writes it.
pub fn windows_path(path: &Path, mount_root: &Path) -> Option<String> {
    let rest = path.strip_prefix(mount_root).ok()?;
    let mut parts = rest.components();
    let Some(Component::Normal(drive)) = parts.next() else { return None };
    let drive = drive.to_str().filter(|d| d.len() == 1 && d.as_bytes()[0].is_ascii_alphabetic())?;
    let tail: Vec<String> = parts.map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    Some(format!("{}:/{}", drive.to_ascii_uppercase(), tail.join("/")))
}

/// The WSL path of a Windows path (`C:/Users/me/Game` or `C:\Users\me\Game`
/// → `/mnt/c/Users/me/Game`); `None` for anything else (a UNC path, a Unix
/// path).
pub fn wsl_path(windows: &str, mount_root: &Path) -> Option<PathBuf> {
    let bytes = windows.as_bytes();
    if bytes.len() < 2 || !bytes[0].is_ascii_alphabetic() || bytes[1] != b':' {
        return None;
    }
    let drive = (bytes[0] as char).to_ascii_lowercase().to_string();
    let mut path = mount_root.join(drive);
    for part in windows[2..].split(['/', '\\']).filter(|p| !p.is_empty()) {
        path.push(part);
    }
    Some(path)
}

/// Whether `project` lies on a Windows drive as WSL mounts it, while the
/// bridge runs in WSL: its Editor is a Windows process.
pub fn on_windows_drive(project: &Path) -> bool {
    Wsl::detect().is_some() && windows_path(project, Path::new(MOUNT_ROOT)).is_some()
}

/// A path as an Editor wrote it, where the bridge can open it: mapped from
/// Windows' form inside WSL, else as it is.
pub fn local_path(written: &str) -> PathBuf {
    match Wsl::detect() {
        Some(_) => wsl_path(written, Path::new(MOUNT_ROOT)).unwrap_or_else(|| written.into()),
        None => written.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_on_a_windows_drive_has_the_windows_name_unity_gives_it() {
        let root = Path::new("/mnt");
        assert_eq!(windows_path(Path::new("/mnt/c/Users/me/My Game"), root).as_deref(), Some("C:/Users/me/My Game"));
        assert_eq!(windows_path(Path::new("/mnt/d"), root).as_deref(), Some("D:/"));
        assert_eq!(windows_path(Path::new("/home/me/Game"), root), None);
        assert_eq!(windows_path(Path::new("/mnt/wsl/x"), root), None, "not a drive letter");
        assert_eq!(wsl_path("C:/Users/me/My Game", root), Some(PathBuf::from("/mnt/c/Users/me/My Game")));
        assert_eq!(wsl_path(r"E:\Work\Game\Assets", root), Some(PathBuf::from("/mnt/e/Work/Game/Assets")));
        assert_eq!(wsl_path("/home/me/Game", root), None);
        assert_eq!(wsl_path(r"\\server\share\Game", root), None);
        let custom = Path::new("/win");
        assert_eq!(wsl_path("c:/x", custom), Some(PathBuf::from("/win/c/x")));
        assert_eq!(windows_path(Path::new("/win/c/x"), custom).as_deref(), Some("C:/x"));
    }

    #[test]
    fn only_nat_mode_and_an_unknown_mode_get_advice() {
        assert_eq!(networking_from(Some("mirrored")), Networking::Mirrored);
        assert_eq!(networking_from(Some("nat")), Networking::Nat);
        assert_eq!(networking_from(None), Networking::Unknown);
        assert_eq!(Wsl { networking: Networking::Mirrored }.advice(), None);
        assert!(Wsl { networking: Networking::Nat }.advice().unwrap().contains("networkingMode=mirrored"));
        assert!(Wsl { networking: Networking::Unknown }.advice().unwrap().contains("wslinfo"));
    }
}

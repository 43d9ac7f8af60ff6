//! Unity versions and the scripting defines Unity sets when it compiles an
//! Editor assembly for one (Unity Manual, "Conditional compilation": the
//! platform, `UNITY_X`, `UNITY_X_Y`, `UNITY_X_Y_Z` and `UNITY_X_Y_OR_NEWER`
//! for every release line up to its own).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Every Unity release line that sets an `_OR_NEWER` define, oldest first
/// (the lines of UnityCsReference's tags; 2023.3 became 6000.0, and Unity 6
/// still defines `UNITY_2023_3_OR_NEWER`).
pub const LINES: &[(u32, u32)] = &[
    (5, 3),
    (5, 4),
    (5, 5),
    (5, 6),
    (2017, 1),
    (2017, 2),
    (2017, 3),
    (2017, 4),
    (2018, 1),
    (2018, 2),
    (2018, 3),
    (2018, 4),
    (2019, 1),
    (2019, 2),
    (2019, 3),
    (2019, 4),
    (2020, 1),
    (2020, 2),
    (2020, 3),
    (2021, 1),
    (2021, 2),
    (2021, 3),
    (2022, 1),
    (2022, 2),
    (2022, 3),
    (2023, 1),
    (2023, 2),
    (2023, 3),
    (6000, 0),
    (6000, 1),
    (6000, 2),
    (6000, 3),
    (6000, 4),
    (6000, 5),
    (6000, 6),
    (6000, 7),
];

/// A Unity version: `6000.5.2f1`, `6000.6.0b1`, `6000.7.0a1`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnityVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// `a`, `b`, `f`, `p`, `c` … and its number.
    pub stage: char,
    pub build: u32,
}

impl FromStr for UnityVersion {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{text:?} is not a Unity version (like 6000.5.2f1)");
        let mut parts = text.splitn(3, '.');
        let major = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let minor = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let rest = parts.next().ok_or_else(bad)?;
        let at = rest.find(|c: char| c.is_ascii_alphabetic()).ok_or_else(bad)?;
        let patch = rest[..at].parse().map_err(|_| bad())?;
        let stage = rest[at..].chars().next().ok_or_else(bad)?;
        let build = rest[at + 1..].parse().map_err(|_| bad())?;
        Ok(UnityVersion { major, minor, patch, stage, build })
    }
}

impl fmt::Display for UnityVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}{}{}", self.major, self.minor, self.patch, self.stage, self.build)
    }
}

impl Ord for UnityVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        let stage = |s: char| match s {
            'a' => 0,
            'b' => 1,
            _ => 2,
        };
        (self.major, self.minor, self.patch, stage(self.stage), self.build).cmp(&(
            other.major,
            other.minor,
            other.patch,
            stage(other.stage),
            other.build,
        ))
    }
}

impl PartialOrd for UnityVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The Editor platforms an Editor assembly is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EditorPlatform {
    Windows,
    MacOs,
    Linux,
}

impl EditorPlatform {
    pub const ALL: [EditorPlatform; 3] = [EditorPlatform::Windows, EditorPlatform::MacOs, EditorPlatform::Linux];

    pub fn define(self) -> &'static str {
        match self {
            EditorPlatform::Windows => "UNITY_EDITOR_WIN",
            EditorPlatform::MacOs => "UNITY_EDITOR_OSX",
            EditorPlatform::Linux => "UNITY_EDITOR_LINUX",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EditorPlatform::Windows => "Windows",
            EditorPlatform::MacOs => "macOS",
            EditorPlatform::Linux => "Linux",
        }
    }
}

/// The defines Unity sets for an Editor assembly of this version on this
/// platform (those a package can observe; the API compatibility level is
/// .NET Standard 2.1, every supported line's default).
pub fn editor_defines(version: &UnityVersion, platform: EditorPlatform) -> Vec<String> {
    let mut defines: Vec<String> = [
        "UNITY_EDITOR",
        "UNITY_EDITOR_64",
        platform.define(),
        "ENABLE_MONO",
        "NET_STANDARD",
        "NET_STANDARD_2_0",
        "NET_STANDARD_2_1",
        "CSHARP_7_3_OR_NEWER",
        "UNITY_ASSERTIONS",
        "DEBUG",
        "TRACE",
    ]
    .iter()
    .map(|d| (*d).to_owned())
    .collect();
    let (major, minor, patch) = (version.major, version.minor, version.patch);
    defines.push(format!("UNITY_{major}"));
    defines.push(format!("UNITY_{major}_{minor}"));
    defines.push(format!("UNITY_{major}_{minor}_{patch}"));
    let mut lines: Vec<(u32, u32)> = LINES.iter().copied().filter(|line| *line <= (major, minor)).collect();
    if !lines.contains(&(major, minor)) {
        lines.push((major, minor));
    }
    defines.extend(lines.into_iter().map(|(a, b)| format!("UNITY_{a}_{b}_OR_NEWER")));
    defines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_print_and_order_as_unity_releases_do() {
        let v: UnityVersion = "6000.5.2f1".parse().unwrap();
        assert_eq!(v.to_string(), "6000.5.2f1");
        let mut all: Vec<UnityVersion> = ["6000.7.0a1", "2021.3.58f1", "6000.6.0b1", "6000.6.0a7", "6000.0.78f1"]
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        all.sort();
        let printed: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert_eq!(printed, ["2021.3.58f1", "6000.0.78f1", "6000.6.0a7", "6000.6.0b1", "6000.7.0a1"]);
        assert!("6000.5".parse::<UnityVersion>().is_err());
    }

    #[test]
    fn each_version_defines_every_line_up_to_its_own() {
        let defines = editor_defines(&"6000.0.78f1".parse().unwrap(), EditorPlatform::MacOs);
        for d in [
            "UNITY_2021_3_OR_NEWER",
            "UNITY_2023_3_OR_NEWER",
            "UNITY_6000_0_OR_NEWER",
            "UNITY_6000_0_78",
            "UNITY_EDITOR_OSX",
        ] {
            assert!(defines.iter().any(|x| x == d), "{d}");
        }
        assert!(!defines.iter().any(|x| x == "UNITY_6000_1_OR_NEWER"));
        let old = editor_defines(&"2021.3.58f1".parse().unwrap(), EditorPlatform::Windows);
        assert!(old.iter().any(|x| x == "UNITY_2021_3_OR_NEWER") && !old.iter().any(|x| x == "UNITY_2022_1_OR_NEWER"));
    }
}

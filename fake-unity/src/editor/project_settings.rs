//! What the Editor reads of its project's `ProjectSettings/`, as Unity reads
//! it: the Enter Play Mode options, which say whether entering play mode
//! reloads the domain.
//!
//! `EditorSettings.asset` keeps `m_EnterPlayModeOptionsEnabled` (the "Enter
//! Play Mode Options" box of Unity 2019.3 to 2023) and the flags
//! `m_EnterPlayModeOptions` (`DisableDomainReload` = 1, `DisableSceneReload`
//! = 2). The domain reloads unless the box is on and the flag set, the test
//! Unity's own `ObjectPool/PoolManager.cs` makes. Unity 6 shows one menu
//! ("When entering Play Mode") over the flags and writes the box as 1. A
//! file or field that is missing is Unity's default: the domain reloads.

use std::path::Path;

/// Where the settings are, under the project.
pub const EDITOR_SETTINGS: &str = "ProjectSettings/EditorSettings.asset";

/// `EnterPlayModeOptions.DisableDomainReload`.
const DISABLE_DOMAIN_RELOAD: u64 = 1;

/// Whether entering play mode reloads the domain in `project`, as its
/// settings are on disk now.
pub fn enter_play_mode_reloads_domain(project: &Path) -> bool {
    let text = std::fs::read_to_string(project.join(EDITOR_SETTINGS)).unwrap_or_default();
    reloads_domain(&text)
}

/// Whether settings written as `text` reload the domain on entering play mode.
pub fn reloads_domain(text: &str) -> bool {
    let field = |name: &str| {
        text.lines()
            .filter_map(|line| line.trim().strip_prefix(name)?.strip_prefix(':'))
            .find_map(|value| value.trim().parse::<u64>().ok())
    };
    let enabled = field("m_EnterPlayModeOptionsEnabled").unwrap_or(0) != 0;
    let options = field("m_EnterPlayModeOptions").unwrap_or(0);
    !(enabled && options & DISABLE_DOMAIN_RELOAD != 0)
}

/// `text` with domain reload on entering play mode switched on or off (the
/// other flags kept), as Unity writes the setting.
pub fn with_domain_reload(text: &str, reload: bool) -> String {
    let mut options = 0;
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(value) = line.trim().strip_prefix("m_EnterPlayModeOptions:") {
            options = value.trim().parse::<u64>().unwrap_or(0);
            continue;
        }
        if line.trim().starts_with("m_EnterPlayModeOptionsEnabled:") {
            continue;
        }
        out.push(line.to_owned());
    }
    let options = if reload { options & !DISABLE_DOMAIN_RELOAD } else { options | DISABLE_DOMAIN_RELOAD };
    out.push("  m_EnterPlayModeOptionsEnabled: 1".to_owned());
    out.push(format!("  m_EnterPlayModeOptions: {options}"));
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_domain_reloads_unless_the_box_is_on_and_the_flag_set() {
        // Unity 6's default, 2019.3 to 2023's default (box off, flags 3),
        // and a file or fields that are missing: reload.
        assert!(reloads_domain("  m_EnterPlayModeOptionsEnabled: 1\n  m_EnterPlayModeOptions: 0\n"));
        assert!(reloads_domain("  m_EnterPlayModeOptionsEnabled: 0\n  m_EnterPlayModeOptions: 3\n"));
        assert!(reloads_domain(""));
        assert!(reloads_domain("  m_EnterPlayModeOptions: 1\n"));
        // "Reload Scene only", "Do not reload Domain or Scene": no reload.
        assert!(!reloads_domain("  m_EnterPlayModeOptionsEnabled: 1\n  m_EnterPlayModeOptions: 1\n"));
        assert!(!reloads_domain("  m_EnterPlayModeOptionsEnabled: 1\n  m_EnterPlayModeOptions: 3\n"));
        // "Reload Domain only".
        assert!(reloads_domain("  m_EnterPlayModeOptionsEnabled: 1\n  m_EnterPlayModeOptions: 2\n"));
    }

    #[test]
    fn switching_keeps_the_other_flags_and_lines() {
        let text = "EditorSettings:\n  m_SerializationMode: 2\n  m_EnterPlayModeOptionsEnabled: 0\n  m_EnterPlayModeOptions: 2\n";
        let off = with_domain_reload(text, false);
        assert!(!reloads_domain(&off));
        assert!(off.contains("m_SerializationMode: 2") && off.contains("m_EnterPlayModeOptions: 3"));
        let on = with_domain_reload(&off, true);
        assert!(reloads_domain(&on) && on.contains("m_EnterPlayModeOptions: 2"));
    }
}

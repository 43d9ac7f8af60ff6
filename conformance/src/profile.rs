//! Which cases apply to the Editor under test: what each case checks
//! ([`Requires`]: the core protocol, an extension, a tool), what the Editor
//! offers ([`Offers`], found out once at the start of a run), and the
//! profile asked for ([`Profile`]).
//!
//! A case for something the Editor does not offer is not applicable, with
//! the reason, and ends at once: an Editor is not failed for lacking an
//! extension it never claimed, and a run against one that lacks most of
//! them is quick.

use std::{collections::BTreeSet, time::Duration};

use editor_link::{
    dialect::{Dialect, PACKAGE},
    discovery::PROTOCOL_VERSION,
    framing::Framing,
    methods,
    version::Version,
};
use serde_json::{Value, json};

use crate::{
    bridge::BridgeCommand,
    case::{Case, Extension, Requires},
    editor_client::Read,
    target::Target,
    wire_log::WireLog,
};

/// The cases to hold the Editor to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// The core protocol, and the extensions and catalogue the Editor says
    /// it offers (or that `--extension` names).
    #[default]
    Auto,
    /// The core protocol only (and `--extension`s): what every
    /// uLoopMCP-2.x-compatible Editor must do.
    Core,
    /// Every case, whatever the Editor offers.
    Full,
}

/// What the Editor under test offers, as it says itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Offers {
    /// Every tool `get-tool-details` lists, internal ones included.
    pub tools: BTreeSet<String>,
    pub extensions: BTreeSet<Extension>,
    /// Whose catalogue it has, if the suite has its reference: the
    /// package's (it says `ProtocolVersion: 1`), or a uLoopMCP's (it says
    /// one of its `Ver`s and no `ProtocolVersion`): [`Dialect::catalogue_of`].
    pub catalogue: Option<&'static Dialect>,
}

/// How long the newline-framing probe waits for an answer.
const PROBE_WAIT: Duration = Duration::from_millis(1500);

impl Offers {
    /// Asks the Editor: `get-tool-details` (with internal tools),
    /// `get-version`'s `ProtocolVersion` and `Capabilities`, and whether a
    /// request in newline framing is answered.
    pub async fn find_out(target: &Target, bridge: &BridgeCommand) -> Result<Offers, String> {
        let session = target.open(WireLog::default(), bridge).await.map_err(|f| format!("{f:?}"))?;
        let mut link = session.link(Framing::Header).await.map_err(|f| format!("{f:?}"))?;
        let details = link
            .result(methods::GET_TOOL_DETAILS, json!({"IncludeDevelopmentOnly": true}))
            .await
            .map_err(|f| format!("get-tool-details: {f:?}"))?;
        let mut offers = Offers {
            tools: details["Tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect(),
            ..Offers::default()
        };
        // uLoopMCP 3 answers `get-version` without listing it (an internal
        // command); its `get-tool-details` says `Ver`, as every result does.
        if offers.tools.contains(methods::GET_VERSION) || details.get("Ver").is_some() {
            if let Ok(version) = link.result(methods::GET_VERSION, json!({})).await {
                offers.read_version(&version);
            }
        }
        if !offers.extensions.contains(&Extension::NewlineFraming) {
            let mut newline = session.link(Framing::Newline).await.map_err(|f| format!("{f:?}"))?;
            let probe = newline.probe().request("probe", "newline");
            if newline.send_json(&probe).await.is_ok() {
                if let Read::Message(answer) = newline.receive(PROBE_WAIT).await {
                    if answer.get("result").is_some() {
                        offers.extensions.insert(Extension::NewlineFraming);
                    }
                }
            }
        }
        Ok(offers)
    }

    /// [`Offers::find_out`], given up to `patience` (with backoff) when the
    /// Editor is one every case shares: one still busy with what came
    /// before the run (a reload, a listener draining its backlog) is asked
    /// again before the run holds it to every case.
    pub async fn find_out_patiently(
        target: &Target,
        bridge: &BridgeCommand,
        patience: Duration,
    ) -> Result<Offers, String> {
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            match Offers::find_out(target, bridge).await {
                Ok(offers) => return Ok(offers),
                Err(why) if !target.is_shared_editor() || started.elapsed() + pause >= patience => return Err(why),
                Err(_) => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// What `get-version` says: whose catalogue the Editor has
    /// ([`Dialect::catalogue_of`]: uLoopMCP 3's internal commands are
    /// answered, though never listed), and for `ProtocolVersion: 1` the
    /// extensions that brings and those its `Capabilities` name.
    pub fn read_version(&mut self, result: &Value) {
        let version = Version::read(result);
        self.catalogue = Dialect::catalogue_of(&version, self.tools.contains(methods::PING));
        if let Some(dialect) = self.catalogue {
            self.tools.extend(dialect.catalogue.unlisted.iter().map(|c| (*c).to_owned()));
        }
        if version.protocol_version == Some(PROTOCOL_VERSION) {
            self.extensions.extend(Extension::OF_PROTOCOL_1);
            self.extensions.extend(version.capabilities.iter().flat_map(|c| c.extensions()));
        }
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        let extensions: Vec<&str> = self.extensions.iter().map(|e| e.name()).collect();
        format!(
            "{} tools; extensions: {}; catalogue: {}",
            self.tools.len(),
            if extensions.is_empty() { "none".to_owned() } else { extensions.join(", ") },
            match self.catalogue {
                Some(dialect) => format!("{}'s", dialect.title),
                None => "its own (no reference here)".into(),
            }
        )
    }
}

/// Decides which cases apply.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub profile: Profile,
    /// Extensions to check whatever the Editor says (`--extension`).
    pub extensions: BTreeSet<Extension>,
    /// What the Editor offers; `None` when it could not be asked (every
    /// case then runs, and says what went wrong).
    pub offers: Option<Offers>,
}

impl Scope {
    /// Every case applies (`prove`: each check must be shown failing).
    pub fn full() -> Scope {
        Scope { profile: Profile::Full, ..Scope::default() }
    }

    /// Why `case` does not apply, if it does not.
    pub fn not_applicable(&self, case: &Case) -> Option<String> {
        if self.profile == Profile::Full {
            return None;
        }
        let offers = self.offers.as_ref()?;
        why_not(&case.requires, offers, self.profile, &self.extensions)
    }
}

fn why_not(requires: &Requires, offers: &Offers, profile: Profile, forced: &BTreeSet<Extension>) -> Option<String> {
    for extension in &requires.extensions {
        if forced.contains(extension) {
            continue;
        }
        match profile {
            Profile::Core => {
                return Some(format!(
                    "not applicable: it checks the {extension} extension, outside the core profile (--extension {extension} adds it)"
                ));
            }
            Profile::Auto | Profile::Full
                if matches!(extension, Extension::DiscoveryFile | Extension::Token)
                    && offers.catalogue.is_some_and(Dialect::on_project_socket) =>
            {
                let title = offers.catalogue.map_or("", |d| d.title);
                return Some(format!(
                    "not applicable: it checks the {extension} extension, and {title} has no discovery file and no token: it listens on a Unix socket (Windows: a named pipe) named after its project"
                ));
            }
            _ if !offers.extensions.contains(extension) => {
                return Some(format!(
                    "not applicable: it checks the {extension} extension, which this Editor does not offer (get-version: {})",
                    if offers.catalogue == Some(&PACKAGE) { "not in its Capabilities" } else { "no ProtocolVersion 1" }
                ));
            }
            _ => {}
        }
    }
    if let Some(catalogue) = requires.catalogue {
        if profile == Profile::Core {
            return Some(format!(
                "not applicable: it checks {}, outside the core profile",
                catalogue.catalogue.reference
            ));
        }
        if offers.catalogue != Some(catalogue) {
            return Some(format!(
                "not applicable: it checks {}, and this Editor's catalogue is {}",
                catalogue.catalogue.reference,
                match offers.catalogue {
                    Some(other) => other.catalogue.reference,
                    None => "its own",
                }
            ));
        }
    }
    let missing: Vec<&str> = requires.tools.iter().map(|t| t.as_ref()).filter(|t| !offers.tools.contains(*t)).collect();
    if !missing.is_empty() {
        return Some(format!("not applicable: it calls {}, which this Editor does not list", missing.join(", ")));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use editor_link::dialect::{ULOOP_2_1_1, ULOOP_3};

    fn uloop() -> Offers {
        Offers {
            tools: [methods::PING, methods::GET_TOOL_DETAILS, "get-logs"].map(String::from).into(),
            extensions: BTreeSet::new(),
            catalogue: Some(&ULOOP_2_1_1),
        }
    }

    fn package() -> Offers {
        let mut offers = Offers { tools: uloop().tools, ..Offers::default() };
        offers.read_version(&json!({"ProtocolVersion": 1, "Capabilities": ["resume", "progress", "no-such"]}));
        offers
    }

    #[test]
    fn what_a_case_needs_decides_whether_it_applies() {
        let none = BTreeSet::new();
        let resume = Requires::extension(Extension::Resume);
        assert_eq!(why_not(&resume, &package(), Profile::Auto, &none), None);
        let said = why_not(&resume, &uloop(), Profile::Auto, &none).unwrap();
        assert!(said.contains("resume extension") && said.contains("no ProtocolVersion 1"), "{said}");
        let core = why_not(&resume, &package(), Profile::Core, &none).unwrap();
        assert!(core.contains("outside the core profile"), "{core}");
        assert_eq!(why_not(&resume, &uloop(), Profile::Core, &[Extension::Resume].into()), None, "--extension");

        assert_eq!(why_not(&Requires::tools(&["get-logs"]), &uloop(), Profile::Core, &none), None);
        let tool = why_not(&Requires::tools(&["unity-search"]), &package(), Profile::Auto, &none).unwrap();
        assert!(tool.contains("calls unity-search"), "{tool}");

        let catalogue = Requires::catalogue_tool("get-logs");
        assert_eq!(why_not(&catalogue, &package(), Profile::Auto, &none), None);
        let other = why_not(&catalogue, &uloop(), Profile::Auto, &none).unwrap();
        assert!(other.contains("this Editor's catalogue is uLoopMCP 2.1.1's"), "{other}");
        assert!(why_not(&catalogue, &package(), Profile::Core, &none).is_some());
        let uloop_catalogue = Requires::catalogue(&ULOOP_2_1_1);
        assert_eq!(why_not(&uloop_catalogue, &uloop(), Profile::Auto, &none), None);
        let package_editor = why_not(&uloop_catalogue, &package(), Profile::Auto, &none).unwrap();
        assert!(package_editor.contains("is the package's tool catalogue"), "{package_editor}");
        let unknown = Offers { catalogue: None, ..uloop() };
        assert!(why_not(&uloop_catalogue, &unknown, Profile::Auto, &none).unwrap().ends_with("is its own"));
    }

    #[test]
    fn the_catalogue_is_told_by_get_version() {
        let read = |version: Value| {
            let mut offers = Offers::default();
            offers.read_version(&version);
            offers.catalogue
        };
        // As the real 2.1.1 server answers (fixtures/recordings/uloop-2.1.1/raw-requests.jsonl).
        assert_eq!(read(json!({"UnityVersion": "6000.0.65f1", "IsEditor": true, "Ver": "2.1.1"})), Some(&ULOOP_2_1_1));
        assert_eq!(read(json!({"UnityVersion": "6000.0.65f1", "Ver": "2.2.0"})), None, "another version, no reference");
        assert_eq!(read(json!({"ProtocolVersion": 1, "Ver": "2.1.1"})), Some(&PACKAGE));
        assert_eq!(read(json!({"ProtocolVersion": 2, "Ver": "2.1.1"})), None);
        // uLoopMCP 3 at c50f54c (fake-unity's model, docs/uloop-3-wire.md §7).
        let v3 = json!({"UnityVersion": "6000.0.65f1", "IsEditor": true, "Ver": "3.0.0-beta.1"});
        assert_eq!(read(v3.clone()), Some(&ULOOP_3));
        let mut offers = Offers::default();
        offers.read_version(&v3);
        assert!(offers.tools.contains(methods::GET_VERSION) && offers.tools.contains(methods::GET_TOOL_DETAILS));
        // The tag v3.0.0-beta.1 says the same Ver but lists ping: another catalogue.
        let mut tagged = Offers { tools: [methods::PING.to_owned()].into(), ..Offers::default() };
        tagged.read_version(&v3);
        assert_eq!(tagged.catalogue, None);
    }

    #[test]
    fn protocol_version_1_offers_its_extensions_and_capabilities_name_the_rest() {
        let offers = package();
        for extension in Extension::OF_PROTOCOL_1.iter().chain(&[Extension::Resume, Extension::Progress]) {
            assert!(offers.extensions.contains(extension), "{extension}");
        }
        assert!(!offers.extensions.contains(&Extension::ImageData));
        assert_eq!(offers.catalogue, Some(&PACKAGE));
        let mut none = Offers::default();
        none.read_version(&json!({"UnityVersion": "6000.0.65f1", "Capabilities": ["resume"]}));
        assert!(none.extensions.is_empty(), "Capabilities count only beside ProtocolVersion 1");
        assert_eq!(
            package().describe(),
            "3 tools; extensions: frame-too-large, error-codes, resume, capabilities, timeouts, tool-metadata, \
             progress, discovery-file; catalogue: the package's"
        );
    }
}

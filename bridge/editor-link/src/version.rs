//! The `get-version` result (protocol §6): which Unity, which project, which
//! package, and — for Editors of this protocol — its version, the Editor
//! process, and the extensions it offers ([`Capabilities`]).
//!
//! Read leniently ([`Version::read`]): a member of the wrong type is taken as
//! absent, never as a reason to refuse the Editor, since uLoopMCP's Editors
//! and older packages answer with less.

use std::fmt;

use serde_json::{Map, Value};

/// One of this project's extensions of the protocol (marked **extension**
/// in `docs/editor-link-protocol.md`): what an Editor may offer beyond the
/// core every uLoopMCP-2.x-compatible Editor follows, named as `Capabilities`
/// says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Extension {
    /// §2 newline framing.
    NewlineFraming,
    /// §2 an over-limit frame answered `frame_too_large`, the connection kept.
    FrameTooLarge,
    /// §3 `-32601` for an unknown tool and `-32602` for invalid params.
    ErrorCodes,
    /// §5 the resume journal (`x-resume`).
    Resume,
    /// §6 `ProtocolVersion`, `EditorInstanceId` and `Capabilities` in `get-version`.
    Capabilities,
    /// §6 the `TimeoutSeconds` parameter and the `timeout` error.
    Timeouts,
    /// §6 `annotations` and `timeoutSeconds` in `get-tool-details`.
    ToolMetadata,
    /// §4 `notifications/progress`.
    Progress,
    /// §6 screenshots' `ImageDataBase64` (`IncludeImageData`).
    ImageData,
    /// §7 `Library/MCPInstance.json`.
    DiscoveryFile,
    /// §7 the token: in the discovery file, required in every request (`x-token`).
    Token,
    /// §6 `get-editor-state`: the main thread's state, answered without it.
    EditorState,
    /// §6 `press-dialog-button` (gated; the package names it on Windows).
    DialogButtons,
    /// §6 each tool's `outputSchema` in `get-tool-details`.
    OutputSchema,
}

impl Extension {
    /// Every extension, in the order reports list them.
    pub const ALL: [Extension; 14] = [
        Extension::NewlineFraming,
        Extension::FrameTooLarge,
        Extension::ErrorCodes,
        Extension::Resume,
        Extension::Capabilities,
        Extension::Timeouts,
        Extension::ToolMetadata,
        Extension::Progress,
        Extension::ImageData,
        Extension::DiscoveryFile,
        Extension::Token,
        Extension::EditorState,
        Extension::DialogButtons,
        Extension::OutputSchema,
    ];

    /// The extensions an Editor that says `ProtocolVersion: 1` offers by
    /// that alone (the others it names in `Capabilities`).
    pub const OF_PROTOCOL_1: [Extension; 6] = [
        Extension::Capabilities,
        Extension::ErrorCodes,
        Extension::FrameTooLarge,
        Extension::Timeouts,
        Extension::ToolMetadata,
        Extension::DiscoveryFile,
    ];

    /// Its name (`newline-framing`), as `Capabilities` says it.
    pub fn name(self) -> &'static str {
        match self {
            Extension::NewlineFraming => "newline-framing",
            Extension::FrameTooLarge => "frame-too-large",
            Extension::ErrorCodes => "error-codes",
            Extension::Resume => "resume",
            Extension::Capabilities => "capabilities",
            Extension::Timeouts => "timeouts",
            Extension::ToolMetadata => "tool-metadata",
            Extension::Progress => "progress",
            Extension::ImageData => "image-data",
            Extension::DiscoveryFile => "discovery-file",
            Extension::Token => "token",
            Extension::EditorState => "editor-state",
            Extension::DialogButtons => "dialog-buttons",
            Extension::OutputSchema => "output-schema",
        }
    }

    /// The extension called `name`.
    pub fn named(name: &str) -> Option<Extension> {
        Extension::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl fmt::Display for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `Capabilities` of `get-version`: the names an Editor lists, in its
/// order, unknown ones kept (a newer Editor's).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct Capabilities(Vec<String>);

impl Capabilities {
    /// These extensions, in this order.
    pub fn of(extensions: impl IntoIterator<Item = Extension>) -> Capabilities {
        Capabilities(extensions.into_iter().map(|e| e.name().to_owned()).collect())
    }

    pub fn has(&self, extension: Extension) -> bool {
        self.0.iter().any(|c| c == extension.name())
    }

    /// The extensions named that this crate knows.
    pub fn extensions(&self) -> impl Iterator<Item = Extension> + '_ {
        self.0.iter().filter_map(|name| Extension::named(name))
    }

    /// Every name, known or not.
    pub fn names(&self) -> &[String] {
        &self.0
    }
}

/// What `get-version` says. `None`: the Editor did not say (or said it as
/// another type).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Version {
    pub unity_version: Option<String>,
    pub platform: Option<String>,
    /// The project's `Assets` folder, as Unity writes paths.
    pub data_path: Option<String>,
    pub product_name: Option<String>,
    pub package_version: Option<String>,
    /// **Extension** `capabilities`: the protocol's version (1).
    pub protocol_version: Option<u32>,
    /// **Extension** `capabilities`: the Editor process, the same across
    /// domain reloads, new when Unity restarts. A resume journal belongs to it.
    pub editor_instance_id: Option<String>,
    /// **Extension** `capabilities`.
    pub capabilities: Option<Capabilities>,
    /// `Ver`, which uLoopMCP's Editors add to every result: their package's version.
    pub ver: Option<String>,
}

impl Version {
    /// A `get-version` result, leniently.
    pub fn read(result: &Value) -> Version {
        let text = |k: &str| result.get(k).and_then(Value::as_str).map(str::to_owned);
        Version {
            unity_version: text("UnityVersion"),
            platform: text("Platform"),
            data_path: text("DataPath"),
            product_name: text("ProductName"),
            package_version: text("PackageVersion"),
            protocol_version: result.get("ProtocolVersion").and_then(Value::as_u64).and_then(|v| u32::try_from(v).ok()),
            editor_instance_id: text("EditorInstanceId"),
            capabilities: result
                .get("Capabilities")
                .and_then(Value::as_array)
                .map(|names| Capabilities(names.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())),
            ver: text("Ver"),
        }
    }

    /// The result as the package writes it (members in its order; what is
    /// `None` left out). `Ver` is the caller's to add, as with every result.
    pub fn to_result(&self) -> Map<String, Value> {
        let mut result = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                result.insert(key.to_owned(), value);
            }
        };
        put("UnityVersion", self.unity_version.clone().map(Value::from));
        put("Platform", self.platform.clone().map(Value::from));
        put("DataPath", self.data_path.clone().map(Value::from));
        put("ProductName", self.product_name.clone().map(Value::from));
        put("PackageVersion", self.package_version.clone().map(Value::from));
        put("ProtocolVersion", self.protocol_version.map(Value::from));
        put("EditorInstanceId", self.editor_instance_id.clone().map(Value::from));
        put("Capabilities", self.capabilities.as_ref().map(|c| Value::from(c.names().to_vec())));
        put("Ver", self.ver.clone().map(Value::from));
        result
    }

    /// Whether the Editor names `extension` in its `Capabilities`.
    pub fn offers(&self, extension: Extension) -> bool {
        self.capabilities.as_ref().is_some_and(|c| c.has(extension))
    }

    /// The package's version: `PackageVersion`, else uLoopMCP's `Ver`.
    pub fn package(&self) -> Option<&str> {
        self.package_version.as_deref().or(self.ver.as_deref())
    }

    /// The Editor keeps a resume journal (protocol §5) and says which Editor
    /// process it belongs to: without that, a call resumed after a crash
    /// would run again in the new process.
    pub fn can_resume(&self) -> bool {
        self.offers(Extension::Resume) && self.editor_instance_id.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_is_read_leniently_and_written_back_in_the_packages_order() {
        let text = r#"{"UnityVersion":"6000.0.65f1","Platform":"OSXEditor","DataPath":"/p/Assets","ProductName":"P","PackageVersion":"0.1.0","ProtocolVersion":1,"EditorInstanceId":"e-1","Capabilities":["resume","progress","x-new"],"Ver":"0.1.0"}"#;
        let version = Version::read(&serde_json::from_str(text).unwrap());
        assert!(version.can_resume() && version.offers(Extension::Progress));
        assert_eq!(
            version.capabilities.as_ref().unwrap().extensions().collect::<Vec<_>>(),
            [Extension::Resume, Extension::Progress]
        );
        assert_eq!(serde_json::to_string(&version.to_result()).unwrap(), text, "unknown capabilities kept");

        let anonymous = Version::read(&json!({"ProtocolVersion": 1, "Capabilities": ["resume"]}));
        assert!(!anonymous.can_resume(), "a journal without its Editor's name cannot be trusted across a crash");
        let uloop = Version::read(&json!({"UnityVersion": "2022.3.1f1", "Ver": "2.1.1", "ProtocolVersion": "1"}));
        assert_eq!((uloop.protocol_version, uloop.package()), (None, Some("2.1.1")), "a wrong type is absent");
        assert!(!uloop.can_resume() && uloop.capabilities.is_none());
    }

    #[test]
    fn every_extension_is_found_by_its_name() {
        for extension in Extension::ALL {
            assert_eq!(Extension::named(extension.name()), Some(extension));
        }
        assert_eq!(Extension::named("no-such"), None);
    }
}

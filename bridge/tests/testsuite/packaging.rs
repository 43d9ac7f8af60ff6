//! The registry entry and the MCP bundle's manifest, checked as the MCP
//! Registry and MCPB clients will: packaging/registry/server.json against the
//! registry's server.json schema (2025-12-11) and packaging/mcpb/manifest.json
//! (the template, and each platform's manifest as packaging/mcpb/pack.mjs
//! fills it in) against the MCPB 0.3 manifest schema, both schemas exact
//! copies (packaging/registry/README.md, packaging/mcpb/README.md say whence);
//! and what the registry checks beyond its schema: that every package names
//! this server where the registry looks (npm's `mcpName`, the `mcp-name:`
//! line of the PyPI and crates.io READMEs), that the namespace is the GitHub
//! owner's, and that every version and identifier is the one we publish.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read(path: &str) -> String {
    let path = root().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &str) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn toml(path: &str) -> toml_edit::DocumentMut {
    read(path).parse().unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn workspace_version() -> String {
    toml("Cargo.toml")["workspace"]["package"]["version"].as_str().unwrap().to_owned()
}

fn server() -> Value {
    json("packaging/registry/server.json")
}

fn server_name() -> String {
    server()["name"].as_str().unwrap().to_owned()
}

/// Every message of `instance` failing `schema`, one a line (empty: valid).
fn schema_errors(schema: &Value, instance: &Value) -> String {
    let validator = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("not a JSON Schema: {e}"));
    validator.iter_errors(instance).map(|e| format!("{}: {e}\n", e.instance_path())).collect()
}

/// The registry's test of a README (ReadmeDeclaresMCPName): `mcp-name: `
/// and the server's name, ended by something a name cannot hold.
fn declares_mcp_name(text: &str, name: &str) -> bool {
    let marker = format!("mcp-name: {name}");
    text.match_indices(&marker).any(|(at, _)| {
        text[at + marker.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/')))
    })
}

/// `text` without its HTML comments, as crates.io renders a README.
fn without_html_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        rest = rest[start..].find("-->").map_or("", |end| &rest[start + end + 3..]);
    }
    out + rest
}

fn package<'a>(server: &'a Value, registry_type: &str) -> &'a Value {
    let packages = server["packages"].as_array().unwrap();
    let mut of_type = packages.iter().filter(|p| p["registryType"] == registry_type);
    let found = of_type.next().unwrap_or_else(|| panic!("server.json has no {registry_type} package"));
    assert!(of_type.next().is_none(), "server.json has two {registry_type} packages");
    found
}

/// The registry's published schema for server.json, where this machine has
/// it: `UNITY_MCP_REGISTRY_SCHEMA`, `packaging/registry/server.schema.json`
/// once someone who can download it from its address commits it, or the
/// copy in the steering repository beside the project
/// (`../shared/reference/mcp-registry/`). The only copy within this
/// project's reach is the library's stored one of another project's file,
/// which the project's rules keep out of its commits
/// (packaging/registry/README.md); the release job checks against the one
/// it downloads from the schema's own address.
fn registry_schema() -> Option<PathBuf> {
    let given = std::env::var_os("UNITY_MCP_REGISTRY_SCHEMA").map(PathBuf::from);
    let committed = root().join("packaging/registry/server.schema.json");
    let beside = root().join("../shared/reference/mcp-registry/server.schema.2025-12-11.json");
    given.into_iter().chain([committed, beside]).find(|p| p.is_file())
}

#[test]
fn server_json_is_valid_against_the_registrys_schema() {
    let Some(path) = registry_schema() else {
        eprintln!(
            "SKIPPED server_json_is_valid_against_the_registrys_schema: the registry's schema is not on this machine \
             (UNITY_MCP_REGISTRY_SCHEMA, or ../shared/reference/mcp-registry/)"
        );
        return;
    };
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(schema["$id"], "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json");
    let server = server();
    assert_eq!(server["$schema"], schema["$id"], "server.json names the schema it is checked against");
    let errors = schema_errors(&schema, &server);
    assert!(errors.is_empty(), "packaging/registry/server.json:\n{errors}");
}

#[test]
fn server_json_is_the_workspace_version_of_what_we_publish() {
    let server = server();
    let version = workspace_version();
    assert_eq!(server["version"], version.as_str(), "server.json's version");
    for p in server["packages"].as_array().unwrap() {
        assert_eq!(p["version"], version.as_str(), "{} package's version", p["registryType"]);
        assert_eq!(p["transport"], json!({"type": "stdio"}), "{} package's transport", p["registryType"]);
    }
    // The bundles' entries carry the hash of real files: stamp.py adds them
    // at release; the committed file has none, nor any placeholder.
    assert!(
        server["packages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["registryType"] != "mcpb" && p.get("fileSha256").is_none()),
        "mcpb entries are stamp.py's"
    );
    let npm = json("packaging/npm/unity-mcp-bridge/package.json");
    assert_eq!(package(&server, "npm")["identifier"], npm["name"], "npm identifier");
    let pypi = toml("packaging/pypi/pyproject.toml");
    assert_eq!(package(&server, "pypi")["identifier"].as_str(), pypi["project"]["name"].as_str(), "PyPI identifier");
    let krate = toml("bridge/Cargo.toml");
    assert_eq!(package(&server, "cargo")["identifier"].as_str(), krate["package"]["name"].as_str(), "crate identifier");
    // The bridge's crate depends on the editor link's at the version
    // published beside it (`cargo publish` needs a version there).
    let workspace = toml("Cargo.toml");
    let link = workspace["workspace"]["dependencies"]["unity-editor-link"]["version"].as_str();
    assert_eq!(link, Some(version.as_str()), "the workspace's unity-editor-link dependency version");
    let repository = workspace["workspace"]["package"]["repository"].as_str().unwrap();
    assert_eq!(server["repository"], json!({"url": repository, "source": "github"}), "server.json's repository");
}

#[test]
fn every_package_names_this_server_where_the_registry_looks() {
    let name = server_name();
    // io.github.<owner>/…: the namespace a GitHub login (or the release
    // workflow's OIDC token) of the repository's owner may publish.
    let server = server();
    let url = server["repository"]["url"].as_str().unwrap();
    let owner = url.strip_prefix("https://github.com/").and_then(|path| path.split('/').next()).unwrap();
    assert!(name.starts_with(&format!("io.github.{owner}/")), "{name} is not in io.github.{owner}/");
    // npm: package.json's mcpName, which pack.mjs keeps in the main package.
    let npm = json("packaging/npm/unity-mcp-bridge/package.json");
    assert_eq!(npm["mcpName"], name.as_str(), "packaging/npm/unity-mcp-bridge/package.json mcpName");
    // PyPI: the README (the package's description), a comment allowed.
    let pypi = read("packaging/pypi/README.md");
    assert!(declares_mcp_name(&pypi, &name), "packaging/pypi/README.md has no `mcp-name: {name}`");
    let readme = toml("packaging/pypi/pyproject.toml")["project"]["readme"].as_str().map(str::to_owned);
    assert_eq!(readme.as_deref(), Some("README.md"), "the wheel's README");
    // crates.io: the crate's README as rendered, which drops HTML comments.
    let krate = toml("bridge/Cargo.toml");
    let readme = krate["package"].get("readme").and_then(|r| r.as_str()).expect("bridge/Cargo.toml names its readme");
    let readme = read(&format!("bridge/{readme}"));
    assert!(
        declares_mcp_name(&without_html_comments(&readme), &name),
        "the crate's README has no visible `mcp-name: {name}` (crates.io drops HTML comments)"
    );
}

#[test]
fn the_mcp_bundles_manifest_is_valid_for_every_platform() {
    let schema = json("packaging/mcpb/manifest.schema.json");
    let template = json("packaging/mcpb/manifest.json");
    assert_eq!(template["manifest_version"], "0.3");
    let errors = schema_errors(&schema, &template);
    assert!(errors.is_empty(), "packaging/mcpb/manifest.json:\n{errors}");
    // What pack.mjs writes into each bundle.
    let version = workspace_version();
    for target in json("packaging/targets.json")["targets"].as_array().unwrap() {
        let exe = format!("server/{}", target["exe"].as_str().unwrap());
        let mut manifest = template.clone();
        manifest["version"] = json!(version);
        manifest["server"]["entry_point"] = json!(exe);
        manifest["server"]["mcp_config"]["command"] = json!(format!("${{__dirname}}/{exe}"));
        manifest["compatibility"]["platforms"] = json!([target["os"]]);
        let errors = schema_errors(&schema, &manifest);
        assert!(errors.is_empty(), "the {} bundle's manifest:\n{errors}", target["npm"]);
    }
    // The command is the bundled binary, and every ${user_config.x} it is
    // given is a setting the manifest declares.
    let config = &template["server"]["mcp_config"];
    assert_eq!(config["command"], format!("${{__dirname}}/{}", template["server"]["entry_point"].as_str().unwrap()));
    let user_config = template["user_config"].as_object().unwrap();
    for arg in config["args"].as_array().unwrap().iter().chain(config["env"].as_object().unwrap().values()) {
        if let Some(key) = arg.as_str().unwrap().strip_prefix("${user_config.").and_then(|k| k.strip_suffix('}')) {
            assert!(user_config.contains_key(key), "mcp_config uses ${{user_config.{key}}}, which is not declared");
        }
    }
    // A setting the user may leave unset has a default: without one, MCPB
    // clients pass `${user_config.x}` on as it is written.
    for (key, setting) in user_config {
        assert!(
            setting["required"] == true || setting.get("default").is_some(),
            "user_config.{key} may be left unset and has no default"
        );
    }
}

/// Every flag and variable the registry entry and the bundle's manifest
/// give the bridge is one it reads (its --help names them).
#[test]
fn every_argument_and_variable_named_is_one_the_bridge_reads() {
    let help = assert_cmd::Command::cargo_bin("unity-mcp-bridge").unwrap().arg("--help").assert().success();
    let help = String::from_utf8_lossy(&help.get_output().stdout).into_owned();
    let mut flags = Vec::new();
    let mut variables = Vec::new();
    for p in server()["packages"].as_array().unwrap() {
        for a in p["packageArguments"].as_array().into_iter().flatten() {
            assert_eq!(a["type"], "named", "{} package's argument {a}", p["registryType"]);
            flags.push(a["name"].as_str().unwrap().to_owned());
        }
        for v in p["environmentVariables"].as_array().into_iter().flatten() {
            variables.push(v["name"].as_str().unwrap().to_owned());
        }
    }
    let config = &json("packaging/mcpb/manifest.json")["server"]["mcp_config"];
    let args = config["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap());
    flags.extend(args.filter(|a| a.starts_with("--")).map(str::to_owned));
    variables.extend(config["env"].as_object().unwrap().keys().cloned());
    assert!(!flags.is_empty() && !variables.is_empty());
    for flag in flags {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(&format!("{flag} "))),
            "the bridge has no {flag}:\n{help}"
        );
    }
    for variable in variables {
        assert!(help.contains(&format!("[env: {variable}")), "the bridge reads no {variable}:\n{help}");
    }
}

#[test]
fn the_registrys_readme_test_wants_the_whole_name() {
    let name = "io.github.unity-mcp-bridge/unity-mcp-bridge";
    assert!(declares_mcp_name(&format!("<!-- mcp-name: {name} -->"), name));
    assert!(declares_mcp_name(&format!("<code>mcp-name: {name}</code>."), name));
    assert!(declares_mcp_name(&format!("mcp-name: {name}"), name));
    assert!(!declares_mcp_name(&format!("mcp-name: {name}-evil"), name));
    assert!(!declares_mcp_name(&format!("mcp-name: {name}."), name));
    assert!(!declares_mcp_name(&without_html_comments(&format!("a <!-- mcp-name: {name} --> b")), name));
}

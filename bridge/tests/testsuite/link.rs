//! The bridge's link to the Editor, against fake-unity over real TCP.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use editor_link::discovery::Locator;
use fake_unity::{Config, FakeUnity, ReloadOptions};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::TcpListener,
};
use unity_mcp_bridge::link::{
    CallError, CallOptions, CutOff, FramingChoice, Link, LinkConfig, LinkEvent, LinkState, NotSent,
    whereabouts::Absence,
};

const WAIT: Duration = Duration::from_secs(10);

pub fn copy_dir(from: &Path, to: &Path) {
    fake_unity::copy_dir(from, to).unwrap();
}

struct Setup {
    fake: FakeUnity,
    project: tempfile::TempDir,
}

async fn fake_with(configure: impl FnOnce(&mut Config)) -> Setup {
    let project = tempfile::tempdir().unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/unity-project"), project.path());
    let mut config = Config::new(project.path());
    config.seed = Some(3);
    config.state.editor.reload_downtime_ms = 100;
    config.state.editor.tools_ready_delay_ms = 10;
    config.state.compile.duration_ms = 20;
    configure(&mut config);
    Setup { fake: FakeUnity::start(config).await.unwrap(), project }
}

fn link_for(project: &Path, tune: impl FnOnce(&mut LinkConfig)) -> Arc<Link> {
    let mut config = LinkConfig::new(Locator { project: Some(project.to_owned()), ..Locator::default() });
    tune(&mut config);
    Link::start(config, None)
}

fn within(seconds: u64) -> CallOptions {
    CallOptions::within(Duration::from_secs(seconds))
}

#[tokio::test]
async fn finds_the_editor_through_the_project_and_calls() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |_| {});
    let result = link.call("ping", json!({"Message": "hi"}), within(10)).await.unwrap();
    assert_eq!(result["Message"], "Unity MCP Bridge received: hi");
    let status = link.status();
    assert_eq!((status.state, status.port), (LinkState::Connected, Some(setup.fake.port())));
    let editor = status.editor.unwrap();
    assert!(editor.can_resume());
    assert_eq!(editor.version.unity_version.as_deref(), Some("6000.0.65f1"));
    let error = link.call("no-such-tool", json!({}), within(10)).await.unwrap_err();
    assert!(matches!(&error, CallError::Editor(e) if e.code == -32601), "{error:?}");
}

#[tokio::test]
async fn many_calls_in_flight_on_one_connection() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |_| {});
    let mut calls = Vec::new();
    for n in 0..50 {
        let link = link.clone();
        calls.push(tokio::spawn(async move { link.call("ping", json!({"Message": n.to_string()}), within(10)).await }));
    }
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap()["Message"], format!("Unity MCP Bridge received: {n}"));
    }
    let stats = setup.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["connectionsAccepted"], 1, "one persistent connection");
}

#[tokio::test]
async fn a_compile_cut_off_by_its_reload_is_resumed_with_its_real_result() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |_| {});
    link.set_client_name("link-test");
    link.call("ping", json!({}), within(10)).await.unwrap();
    let script = setup.project.path().join("Assets/Scripts/ScoreKeeper.cs");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, text.replace("A known bug", "A known, documented bug")).unwrap();
    let result = link.call("compile", json!({}), within(10)).await.unwrap();
    assert_eq!((result["Success"].clone(), result["ErrorCount"].clone()), (json!(true), json!(0)));
    let stats = setup.fake.control().get("/stats").await.unwrap();
    assert_eq!(
        (stats["reloads"].clone(), stats["resumed"].clone(), stats["calls"]["compile"].clone()),
        (json!(1), json!(1), json!(2))
    );
    assert_eq!(link.status().reloads, 1);
}

#[tokio::test]
async fn a_call_in_flight_at_a_reload_is_reported_interrupted_not_run_twice() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |_| {});
    link.set_client_name("link-test");
    link.call("ping", json!({}), within(10)).await.unwrap();
    let call = {
        let link = link.clone();
        tokio::spawn(async move {
            link.call("debug-sleep", json!({"SleepSeconds": 5, "TimeoutSeconds": 30}), within(20)).await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    setup.fake.reload(ReloadOptions::default()).await.unwrap();
    let error = call.await.unwrap().unwrap_err();
    assert!(matches!(&error, CallError::Editor(e) if e.data_type() == Some("interrupted")), "{error:?}");
    let stats = setup.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["calls"]["debug-sleep"], 2, "sent once, resumed once, never run again");
}

#[tokio::test]
async fn a_call_made_while_the_editor_reloads_waits_for_it() {
    let setup = fake_with(|c| c.state.editor.reload_downtime_ms = 400).await;
    let link = link_for(setup.project.path(), |_| {});
    link.call("ping", json!({}), within(10)).await.unwrap();
    setup.fake.control().post("/reload", json!({"movePort": true})).await.unwrap();
    // Wait until the link has noticed.
    let deadline = Instant::now() + WAIT;
    while link.is_connected() {
        assert!(Instant::now() < deadline, "the link never noticed the reload");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let result = link.call("ping", json!({"Message": "after"}), within(10)).await.unwrap();
    assert_eq!(result["Message"], "Unity MCP Bridge received: after");
    assert_eq!(link.status().port, Some(setup.fake.port()), "followed the port move through the discovery file");
}

#[tokio::test]
async fn an_editor_absent_at_start_is_found_when_it_appears() {
    let project = tempfile::tempdir().unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/unity-project"), project.path());
    let link = link_for(project.path(), |_| {});
    // Nothing has the project open: said at once, whatever the deadline.
    let error = link.call("ping", json!({}), CallOptions::within(Duration::from_secs(60))).await.unwrap_err();
    let CallError::NotSent { why: NotSent::Absent(Absence::NotRunning { other: None, .. }), .. } = &error else {
        panic!("{error:?}")
    };
    let tried = link.status().tried;
    assert!(tried.iter().any(|t| t.contains("MCPInstance.json: not there")), "{tried:?}");
    assert!(tried.iter().any(|t| t.contains("port 8700")), "{tried:?}");
    let mut events = link.subscribe();
    let mut config = Config::new(project.path());
    config.seed = Some(4);
    let fake = FakeUnity::start(config).await.unwrap();
    let result = link.call("ping", json!({"Message": "late"}), within(10)).await.unwrap();
    assert_eq!(result["Message"], "Unity MCP Bridge received: late");
    assert_eq!(tokio::time::timeout(WAIT, events.recv()).await.unwrap().unwrap(), LinkEvent::Connected);
    drop(fake);
}

#[tokio::test]
async fn an_editor_of_another_project_is_not_used() {
    // It lets clients without its token in, so the project is what tells.
    let setup = fake_with(|c| c.state.settings.allow_clients_without_token = true).await;
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(other.path().join("Assets")).unwrap();
    let mut config = LinkConfig::new(Locator { project: Some(other.path().to_owned()), ..Locator::default() });
    config.connect_timeout = Duration::from_secs(2);
    // The other project has no discovery file; point it at the fake's port
    // through uLoopMCP's settings, as a wrong guess would.
    std::fs::create_dir_all(other.path().join("UserSettings")).unwrap();
    std::fs::write(
        other.path().join("UserSettings/UnityMcpSettings.json"),
        format!(r#"{{"customPort":{}}}"#, setup.fake.port()),
    )
    .unwrap();
    let link = Link::start(config, None);
    let error = link.call("ping", json!({}), CallOptions::within(Duration::from_secs(60))).await.unwrap_err();
    // No Unity has the other project open; the Editor there is another's, and said so.
    let CallError::NotSent { why: NotSent::Absent(Absence::NotRunning { other: Some(other), .. }), .. } = &error else {
        panic!("{error:?}")
    };
    assert!(other.contains("another project"), "{other}");
}

#[tokio::test]
async fn the_editor_s_token_is_sent_and_one_it_refuses_is_not_used() {
    let setup = fake_with(|_| {}).await;
    // In the project: the token comes from its discovery file.
    let link = link_for(setup.project.path(), |_| {});
    link.call("ping", json!({}), within(10)).await.unwrap();

    // By port alone, without the token: not used, and the call did not run.
    let port = setup.fake.port();
    let mut config = LinkConfig::new(Locator { explicit_port: Some(port), ..Locator::default() });
    config.connect_timeout = Duration::from_secs(2);
    let error = Link::start(config, None)
        .call("ping", json!({}), CallOptions::within(Duration::from_millis(500)))
        .await
        .unwrap_err();
    let CallError::NotSent { why: NotSent::NoEditor { tried }, .. } = &error else { panic!("{error:?}") };
    assert!(tried.iter().any(|t| t.contains("wants the token") && t.contains("none was found")), "{tried:?}");
    assert!(!error.may_have_run());

    // By port with the token given (`--token`): used.
    let token = editor_link::discovery::DiscoveryFile::read(setup.project.path()).unwrap().token;
    let config = LinkConfig::new(Locator { explicit_port: Some(port), explicit_token: token, ..Locator::default() });
    Link::start(config, None).call("ping", json!({}), within(10)).await.unwrap();
    assert_eq!(setup.fake.editor().stats.runs("ping"), 2, "only the calls with the token ran");
}

#[tokio::test]
async fn a_damaged_answer_fails_its_call_at_once() {
    let setup = fake_with(|_| {}).await;
    // The first half of the answer: its id is legible, the JSON is not.
    let fault = setup
        .fake
        .add_fault(
            fake_unity::RuleSpec::new(fake_unity::Fault::Truncate(fake_unity::faults::Truncate { keep: None }))
                .method("get-logs")
                .times(1),
        )
        .unwrap();
    let link = link_for(setup.project.path(), |_| {});
    let error = link.call("get-logs", json!({}), within(30)).await.unwrap_err();
    assert!(matches!(&error, CallError::Unreadable { reason } if reason.contains("EOF")), "{error:?}");
    assert_eq!(fault.fired(), 1);
    let logs = link.call("get-logs", json!({"MaxCount": 1}), within(10)).await.unwrap();
    assert_eq!(logs["DisplayedCount"], 1);
}

#[tokio::test]
async fn a_response_over_the_limit_fails_only_its_call() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |c| c.response_limit = 4096);
    let error = link.call("get-tool-details", json!({"IncludeDevelopmentOnly": true}), within(10)).await.unwrap_err();
    assert!(matches!(error, CallError::TooLarge { limit: 4096, .. }), "{error:?}");
    let ping = link.call("ping", json!({"Message": "still"}), within(10)).await.unwrap();
    assert_eq!(ping["Message"], "Unity MCP Bridge received: still");
}

#[tokio::test]
async fn newline_framing_is_spoken_when_asked_or_needed() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |c| c.framing = FramingChoice::Newline);
    link.call("ping", json!({}), within(10)).await.unwrap();
    assert_eq!(link.status().framing, Some("newline"));

    // An Editor that only understands newline framing: Auto falls back.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(newline_only_editor(listener));
    let config = LinkConfig::new(Locator { explicit_port: Some(port), ..Locator::default() });
    let link = Link::start(config, None);
    let result = link.call("ping", json!({"Message": "legacy"}), within(10)).await.unwrap();
    assert_eq!(result["Message"], "legacy");
    assert_eq!(link.status().framing, Some("newline"));
}

/// A legacy Editor: reads lines, answers `{"id":…,"result":{"Message":…}}`,
/// and closes a connection whose first line is not JSON.
async fn newline_only_editor(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { return };
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(request) = serde_json::from_str::<Value>(&line) else { return };
                let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"Message": request["params"]["Message"], "UnityVersion": "2021.3.0f1"}});
                if write.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// One header-framed body, as the hand-written Editors of these tests read
/// it (they write only `Content-Length: N`); `None` at the end of the stream.
pub async fn read_frame(reader: &mut (impl tokio::io::AsyncBufRead + Unpin)) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).await.unwrap_or(0) == 0 {
            return None;
        }
        let Some(len) = header.trim().strip_prefix("Content-Length: ").and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let mut blank = String::new();
        let _ = reader.read_line(&mut blank).await;
        let mut body = vec![0; len];
        return reader.read_exact(&mut body).await.ok().map(|_| body);
    }
}

#[tokio::test]
async fn a_silent_editor_is_detected_and_left() {
    // Answers the handshake on every connection, then says nothing more.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut reader = BufReader::new(read);
                let mut answered = false;
                while let Some(body) = read_frame(&mut reader).await {
                    let request: Value = serde_json::from_slice(&body).unwrap();
                    if !answered && request["method"] == "get-version" {
                        answered = true;
                        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"ProtocolVersion": 1, "Capabilities": []}}).to_string();
                        let _ = write
                            .write_all(format!("Content-Length: {}\r\n\r\n{answer}", answer.len()).as_bytes())
                            .await;
                    }
                }
            });
        }
    });
    let mut config = LinkConfig::new(Locator { explicit_port: Some(port), ..Locator::default() });
    config.silence_before_ping = Duration::from_millis(200);
    config.ping_deadline = Duration::from_millis(200);
    let link = Link::start(config, None);
    let error = link.call("get-logs", json!({}), CallOptions::within(Duration::from_secs(3))).await.unwrap_err();
    // Sent, unanswered, and this Editor cannot resume: it may have run.
    assert_eq!(error, CallError::CutOff(CutOff::Silent));
    let deadline = Instant::now() + WAIT;
    while connections.load(std::sync::atomic::Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "the silent connection was never left for a new one");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_large_answer_arrives_whole() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |_| {});
    let details = link.call("get-tool-details", json!({"IncludeDevelopmentOnly": true}), within(10)).await.unwrap();
    assert_eq!(details["Tools"].as_array().unwrap().len(), 19);
}

#[tokio::test]
async fn a_read_only_call_interrupted_by_a_reload_is_made_again() {
    let setup = fake_with(|c| c.state.editor.reload_downtime_ms = 100).await;
    let link = link_for(setup.project.path(), |_| {});
    link.set_client_name("link-test");
    link.call("ping", json!({}), within(10)).await.unwrap();
    let call = {
        let link = link.clone();
        let mut options = within(20);
        options.read_only = true;
        tokio::spawn(async move {
            link.call("debug-sleep", json!({"SleepSeconds": 1, "TimeoutSeconds": 30}), options).await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    setup.fake.reload(ReloadOptions::default()).await.unwrap();
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["WasCancelled"], false);
    let stats = setup.fake.control().get("/stats").await.unwrap();
    assert_eq!(
        (stats["calls"]["debug-sleep"].clone(), stats["resumed"].clone()),
        (json!(3), json!(1)),
        "sent, resumed (interrupted), sent again"
    );
}

/// A timeout is not a framing verdict: an Editor that does not answer is
/// never tried in the legacy newline framing because of it.
#[tokio::test]
async fn a_hung_editor_is_not_taken_for_a_newline_editor() {
    let setup = fake_with(|_| {}).await;
    let link = link_for(setup.project.path(), |c| {
        c.silence_before_ping = Duration::from_millis(200);
        c.ping_deadline = Duration::from_millis(200);
        c.connect_timeout = Duration::from_millis(300);
    });
    link.call("ping", json!({}), within(10)).await.unwrap();
    setup.fake.hang(None);
    let call = {
        let link = link.clone();
        tokio::spawn(async move { link.call("get-logs", json!({}), within(3)).await })
    };
    // The watchdog gives up on the silent connection; reconnects time out.
    tokio::time::sleep(Duration::from_secs(2)).await;
    setup.fake.end_hang();
    let _ = call.await.unwrap();
    link.call("ping", json!({}), within(10)).await.unwrap();
    assert_eq!(link.status().framing, Some("header"));
    let stats = setup.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["framings"]["newline"], 0, "{}", stats["framings"]);
}

/// uLoopMCP 2.1.1 answers one request at a time per connection: a call made
/// while another runs goes out on a connection of its own (a lane) and is
/// answered while the first still runs; the first, cancelled, has its lane
/// closed at once, which frees the Editor's side of it; the lanes are
/// bounded and an answered call's lane is used again.
#[tokio::test]
async fn on_an_editor_that_answers_in_order_no_call_waits_behind_another() {
    let setup = fake_with(|config| config.editor = fake_unity::EditorKind::Uloop211).await;
    let link = link_for(setup.project.path(), |_| {});
    link.call("get-logs", json!({}), within(10)).await.unwrap();
    let connections = || setup.fake.editor().clients().len();
    let before = connections();

    let long = within(60);
    let cancel = long.cancel.clone();
    let sleeping = tokio::spawn({
        let link = link.clone();
        async move { link.call("debug-sleep", json!({"SleepSeconds": 30}), long).await }
    });
    let deadline = Instant::now() + WAIT;
    while link.status().calls_in_flight == 0 {
        assert!(Instant::now() < deadline, "the 30 s call never went out");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let logs = link.call("get-logs", json!({}), within(20)).await.unwrap();
    assert!(logs.get("Logs").is_some(), "{logs}");
    assert!(!sleeping.is_finished(), "get-logs was answered only after the 30 s call");

    cancel.cancel();
    assert!(matches!(sleeping.await.unwrap(), Err(CallError::Cancelled)));
    // The cancelled call's connection is closed: the Editor sees it go.
    let deadline = Instant::now() + WAIT;
    while connections() > before + 1 {
        assert!(Instant::now() < deadline, "{} connections stay open after the cancel", connections());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Twenty at once: each answered, on at most MAX_LANES lanes.
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let link = link.clone();
            tokio::spawn(async move { link.call("get-logs", json!({}), within(20)).await })
        })
        .collect();
    for call in calls {
        call.await.unwrap().unwrap();
    }
    assert!(connections() <= before + 8, "{} connections", connections());
    assert_eq!(link.status().calls_in_flight, 0);
}

/// Every lane busy with a long call: one more call waits for a lane until its
/// deadline and is answered "not sent" — the Editor is there, but busy — never
/// "no Editor found".
#[tokio::test]
async fn a_call_that_finds_every_lane_busy_is_told_so_and_not_sent() {
    let setup = fake_with(|config| config.editor = fake_unity::EditorKind::Uloop211).await;
    let link = link_for(setup.project.path(), |_| {});
    link.call("get-logs", json!({}), within(10)).await.unwrap();
    let long: Vec<_> = (0..8).map(|_| within(60)).collect();
    let cancels: Vec<_> = long.iter().map(|o| o.cancel.clone()).collect();
    let sleeping: Vec<_> = long
        .into_iter()
        .map(|options| {
            let link = link.clone();
            tokio::spawn(async move { link.call("debug-sleep", json!({"SleepSeconds": 30}), options).await })
        })
        .collect();
    let deadline = Instant::now() + WAIT;
    while link.status().calls_in_flight < 8 {
        assert!(Instant::now() < deadline, "only {} of the 8 long calls went out", link.status().calls_in_flight);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let refused = link.call("get-logs", json!({}), within(1)).await;
    match refused {
        Err(error @ CallError::NotSent { why: NotSent::Busy { connections: 8 }, .. }) => {
            assert!(!error.may_have_run());
            assert!(error.to_string().contains("all 8 connections to the Editor were busy"), "{error}");
        }
        other => panic!("expected not sent, every connection busy: {other:?}"),
    }
    for cancel in cancels {
        cancel.cancel();
    }
    for call in sleeping {
        assert!(matches!(call.await.unwrap(), Err(CallError::Cancelled)));
    }
}

/// Outside every project the Editors uLoopMCP leaves findable are found
/// without a registry entry: a v3 Editor by its socket, a 2.1.1 Editor by
/// its port, each asked `get-version` for its project. Two open: never a
/// guess; the one chosen is used; one open: used.
#[cfg(unix)]
#[tokio::test]
async fn uloop_editors_are_found_outside_every_project_and_never_guessed_among() {
    use std::os::unix::fs::PermissionsExt;
    use unity_mcp_bridge::link::open_editors::LookOutside;
    let sockets = tempfile::tempdir().unwrap();
    std::fs::set_permissions(sockets.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = sockets.path().join("UnityCliLoop-00000000000000aa.sock");
    let v3 = fake_with(|c| {
        c.editor = fake_unity::EditorKind::Uloop3;
        c.endpoint = Some(editor_link::endpoint::Endpoint::Unix(socket.clone()));
    })
    .await;
    let v2 = fake_with(|c| c.editor = fake_unity::EditorKind::Uloop211).await;
    let looking = |ports: Vec<u16>| {
        let mut config = LinkConfig::new(Locator::default());
        config.look_outside = LookOutside { registry: None, uloop3_sockets: Some(sockets.path().to_owned()), ports };
        Link::start(config, None)
    };
    let link = looking(vec![v2.fake.port()]);
    let error = link.call("get-version", json!({}), within(60)).await.unwrap_err();
    let CallError::NotSent { why: NotSent::Absent(Absence::Several { editors }), .. } = &error else {
        panic!("{error:?}")
    };
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap();
    let found: Vec<(PathBuf, &str)> = editors.iter().map(|e| (e.project.clone(), e.found_by.as_str())).collect();
    assert!(found.contains(&(canonical(v3.project.path()), "uLoopMCP 3 socket")), "{found:?}");
    assert!(found.contains(&(canonical(v2.project.path()), "port scan")), "{found:?}");

    link.choose(canonical(v3.project.path())).unwrap();
    let version = link.call("get-version", json!({}), within(10)).await.unwrap();
    assert!(version["DataPath"].as_str().unwrap().starts_with(canonical(v3.project.path()).to_str().unwrap()));

    // Only the v3 Editor open (the 2.1.1 port not asked): used, and said so.
    let only = looking(Vec::new());
    only.call("get-version", json!({}), within(10)).await.unwrap();
    let place = only.status().place.to_json();
    assert_eq!(place["how"], "outside any project: the only open Editor", "{place}");
}

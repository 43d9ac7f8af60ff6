//! The `mcp` cases of domain reloads: list changes, calls that wait, calls
//! cut off.

use super::*;
use crate::finding::{Finding, violation};

// ---- reloads ----

/// Removes `tools` at the next reload, then reloads (and waits for it).
pub(super) async fn reload_without(s: &Session, tools: &[&str]) -> Result<(), Finding> {
    add_fault(
        s,
        json!({"name": "tools-removed", "on": "reload", "fault": {"kind": "toolsChange", "remove": tools}, "times": 1}),
    )
    .await?;
    s.control()?.reload(200, false).await.map_err(control_failed)?;
    Ok(())
}

/// Gives the Editor its tools back (the next cases share a remote Editor).
pub(super) async fn restore_tools(s: &Session) -> Result<(), Finding> {
    s.control()?.post("/reset", json!({})).await.map_err(control_failed)?;
    Ok(())
}

pub(super) fn list_changed(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let before = mcp.list_tools().await?;
        ensure!(before.iter().any(|t| t["name"] == "unity-search"), "unity-search is not offered to begin with");
        reload_without(&s, &["unity-search"]).await?;
        if notification(&mut mcp, "notifications/tools/list_changed", Duration::from_secs(10)).await?.is_none() {
            return violation("no notifications/tools/list_changed within 10 s of a reload that removed unity-search");
        }
        let after = mcp.list_tools().await?;
        restore_tools(&s).await?;
        ensure!(
            !after.iter().any(|t| t["name"] == "unity-search"),
            "tools/list still offers unity-search after list_changed"
        );
        mcp.finish().await
    })
}

pub(super) fn list_changed_after_initialized(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let answer = mcp
            .call_method(
                "initialize",
                json!({"protocolVersion": mcp_client::CLIENT_VERSION, "capabilities": {},
                       "clientInfo": {"name": "unity-conformance", "version": "1"}}),
            )
            .await?;
        ensure!(answer.get("result").is_some(), "initialize: {answer}");
        // Connected, not yet initialized: make the tools change.
        let _ = mcp.call_method("tools/list", json!({})).await?;
        reload_without(&s, &["unity-search"]).await?;
        let early = notification(&mut mcp, "notifications/tools/list_changed", Duration::from_secs(2)).await;
        restore_tools(&s).await?;
        if let Some(early) = early? {
            return violation(format!("list_changed before notifications/initialized: {early}"));
        }
        mcp.finish().await
    })
}

pub(super) fn reload_call_waits(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        s.begin_reload().await?;
        let result = mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        ensure!(result["structuredContent"].get("TotalCount").is_some(), "not get-logs' result: {result}");
        mcp.finish().await
    })
}

pub(super) fn reload_in_flight(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        add_fault(
            &s,
            json!({"name": "mcp.reload.in-flight", "match": {"method": "get-hierarchy"},
                   "fault": {"kind": "slowTool", "ms": 1000}, "times": 8}),
        )
        .await?;
        let control = s.control()?;
        let mut ids = Vec::new();
        for _ in 0..8 {
            ids.push(mcp.request("tools/call", json!({"name": "get-hierarchy", "arguments": {"MaxDepth": 1}})).await?);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        control.post("/reload", json!({"downtimeMs": 300})).await.map_err(control_failed)?;
        for answer in mcp.responses(&ids).await? {
            ensure!(
                answer.get("result").is_some() && !is_error_result(&answer),
                "a read-only call in flight at the reload must be answered with its result (resent), got {answer}"
            );
        }
        // Exactly once: nothing more for these ids.
        if let Some(extra) = mcp.next_message(Duration::from_millis(500)).await?.filter(|m| m.get("method").is_none()) {
            return violation(format!("a second answer: {extra}"));
        }
        mcp.finish().await
    })
}

/// The Editor's own markers: while it compiles, and from a domain reload's
/// start until it listens again.
const BUSY_LOCKS: [&str; 2] = ["Temp/compiling.lock", "Temp/domainreload.lock"];

pub(super) fn compile_waits_for_reload(s: Session) -> CheckFuture {
    Box::pin(async move {
        let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
        let mut mcp = initialized(&s).await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        crate::reload::write_script(&project)?;
        let answer = mcp.call("compile", json!({"WaitForDomainReload": true})).await;
        let busy: Vec<&str> = BUSY_LOCKS.iter().copied().filter(|lock| project.join(lock).exists()).collect();
        let state = match s.control() {
            Ok(control) => control.get("/state").await.ok().map(|state| state["state"].clone()),
            Err(_) => None,
        };
        // The project as it was: the script gone, compiled again.
        let _ = crate::reload::remove_script(&project);
        let restored = mcp.call("compile", json!({"WaitForDomainReload": true})).await;
        let answer = answer?;
        ensure!(
            answer.get("result").is_some() && !is_error_result(&answer),
            "compile with WaitForDomainReload did not give its result: {}",
            crate::wire_log::excerpt(answer.to_string().as_bytes())
        );
        ensure!(
            busy.is_empty(),
            "compile with WaitForDomainReload was answered while {} existed: the Editor had not finished the reload the client asked to wait for",
            busy.join(" and ")
        );
        if let Some(state) = state {
            ensure!(
                state == "ready",
                "compile with WaitForDomainReload was answered with the Editor {state}, not ready"
            );
        }
        restored?;
        mcp.finish().await
    })
}

// ---- PlayMode runs and the reload of entering play mode ----

pub(super) fn playmode_across_reload(s: Session) -> CheckFuture {
    Box::pin(async move { playmode_run(&s, true).await })
}

pub(super) fn playmode_reload_off(s: Session) -> CheckFuture {
    Box::pin(async move { playmode_run(&s, false).await })
}

/// A PlayMode run through the bridge with the project's domain reload on
/// entering play mode on or off (written into the project's settings when
/// they say otherwise, for an Editor that reads them when it enters play
/// mode: one the suite controls; put back after): answered at once with
/// the project's PlayMode tests counted, and the domain reloaded as the
/// Editor's dialect says it does (where the control API can tell).
async fn playmode_run(s: &Session, reload: bool) -> Result<(), Finding> {
    use fake_unity::editor::project_settings::{EDITOR_SETTINGS, reloads_domain, with_domain_reload};
    let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
    let settings = project.join(EDITOR_SETTINGS);
    let original = std::fs::read_to_string(&settings).unwrap_or_default();
    let rewrite = reloads_domain(&original) != reload;
    if rewrite && s.control.is_none() {
        return Err(Finding::NotApplicable(format!(
            "the project's domain reload on entering play mode is {}: an Editor the suite does not control reads its settings only when it starts",
            if reload { "off" } else { "on" }
        )));
    }
    let tests = crate::cases::behaviour::tests_in(&project.join("Assets/Tests/PlayMode"))
        .map_err(|e| Finding::Harness(format!("reading the project's PlayMode tests: {e}")))?
        .0;
    let dialect = {
        let mut link = s.link(Framing::Header).await?;
        let version = link.result(editor_link::methods::GET_VERSION, json!({})).await?;
        editor_link::dialect::Dialect::speaking(
            &s.editor_endpoint().await,
            &editor_link::version::Version::read(&version),
        )
    };
    let reloads = || async {
        match &s.control {
            Some(control) => control.get("/state").await.ok().and_then(|state| state["reloads"].as_u64()),
            None => None,
        }
    };
    if rewrite {
        std::fs::write(&settings, with_domain_reload(&original, reload))
            .map_err(|e| Finding::Harness(format!("writing {EDITOR_SETTINGS}: {e}")))?;
    }
    let before = reloads().await;
    let outcome = async {
        let mut mcp = initialized(s).await?;
        let answer = mcp.call_ok("run-tests", json!({"TestMode": "PlayMode"})).await;
        Ok::<_, Finding>((mcp, answer))
    }
    .await;
    let after = reloads().await;
    if rewrite {
        let _ = std::fs::write(&settings, &original);
    }
    let (mcp, answer) = outcome?;
    let result = answer?;
    let counted = &result["structuredContent"];
    ensure!(
        counted["TestCount"].as_u64() == Some(tests as u64),
        "TestCount {} but the project has {tests} PlayMode tests: {result}",
        counted["TestCount"]
    );
    let expected = u64::from(reload && dialect.play_mode_tests == editor_link::dialect::PlayModeTests::GoOnAfterReload);
    if let (Some(before), Some(after)) = (before, after) {
        ensure!(
            after - before == expected,
            "{} domain reload(s) during the run; {} expects {expected} with domain reload {}",
            after - before,
            dialect.title,
            if reload { "on" } else { "off" }
        );
    }
    mcp.finish().await
}

//! The HTTP control API on loopback (docs/fake-unity.md): drive the fake from a test or
//! a shell, and read its state and counters.
//!
//! | method and path   | body                                         | answer |
//! |-------------------|----------------------------------------------|--------|
//! | `POST /reload`    | `{"downtimeMs":N,"movePort":bool,"wait":bool}` (all optional) | 202 `{"accepted":true}`, or with `wait` 200 and where it came back |
//! | `POST /quit`      | —                                            | 202, then the Editor quits |
//! | `POST /crash`     | `{"restartAfterMs":N,"movePort":bool,"wait":bool}` (all optional) | 202; with `wait` (and `restartAfterMs`) 200 and where the new process listens |
//! | `POST /restart`   | `{"movePort":bool}`                          | a new Editor process after a crash; 200 and where it listens |
//! | `POST /hang`      | `{"ms":N}` (optional)                        | the whole Editor hangs, for `ms` or until `DELETE /hang` |
//! | `DELETE /hang`    | —                                            | the hang ends |
//! | `GET /state`      | —                                            | port, session, connections, play mode, console counts, settings |
//! | `GET /stats`      | —                                            | counters, and each fault rule with its firings |
//! | `POST /settings`  | a partial settings object                    | the new settings |
//! | `GET /faults`     | —                                            | the rules, each with `fired` and `matched` |
//! | `POST /faults`    | a rule, or an array of rules                 | 201 `{"added":[names]}`; all or none |
//! | `PUT /faults`     | an array of rules (or `{"faults":[…]}`)      | the idempotent bulk load: the rule set becomes exactly this; unchanged rules keep their counters |
//! | `DELETE /faults`  | —                                            | every rule removed |
//! | `DELETE /faults/NAME` | —                                        | that rule removed (404 if unknown) |
//! | `POST /reset`     | —                                            | rules removed, tools back, held ports and zombie listeners released |
//!
//! Rules are described in [`crate::faults`]; a bad rule is a 400 naming it.
//!
//! Only loopback callers get in: a request whose `Host` is not a loopback
//! name, or whose `Origin` (a browser's) is not a loopback page, is a 403.
//! A web page may send a "simple" cross-origin POST (`text/plain`) to any
//! local port, and DNS rebinding gives one a hostname that resolves here.
//!
//! [`ControlClient`] is a small client for it, used by the tests and the
//! conformance runner.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use axum::{
    Json, Router,
    body::Bytes,
    extract::{Path, State},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{delete, get, post},
};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::{
    editor::{CrashOptions, Editor, ReloadOptions},
    faults::{FaultError, Faults, RuleSpec},
    stall::Stall,
};

/// What the control API drives: the simulated Editor, or a proxy in front
/// of a real one (which has faults, a hang and counters, and no Editor).
pub trait Host: Send + Sync + 'static {
    fn faults(&self) -> &Arc<Faults>;
    /// What a hang holds.
    fn hang(&self) -> &Arc<Stall>;
    /// The `GET /state` document.
    fn state_json(&self) -> Value;
    /// The counters of `GET /stats` (the rules are added to them).
    fn stats_json(&self) -> Value;
    /// Why a rule cannot be carried out here, if it cannot.
    fn refuses(&self, spec: &RuleSpec) -> Option<String> {
        let _ = spec;
        None
    }
    /// `POST /reset`: every fault removed, everything they hold released.
    fn reset(&self);
    /// `POST /quit`.
    fn quit(&self);
    /// The seed of every random choice.
    fn seed(&self) -> u64;
}

impl Host for Editor {
    fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }

    fn hang(&self) -> &Arc<Stall> {
        &self.hang
    }

    fn state_json(&self) -> Value {
        Editor::state_json(self)
    }

    fn stats_json(&self) -> Value {
        self.stats.to_json()
    }

    fn reset(&self) {
        self.reset_faults();
    }

    fn quit(&self) {
        self.request_quit(None);
    }

    fn seed(&self) -> u64 {
        self.seed
    }
}

/// The routes every host has: state, counters, faults, the hang, reset, quit.
pub fn host_routes<H: Host>() -> Router<Arc<H>> {
    Router::new()
        .route("/state", get(state::<H>))
        .route("/stats", get(stats::<H>))
        .route("/quit", post(quit::<H>))
        .route("/hang", post(hang::<H>).delete(end_hang::<H>))
        .route(
            "/faults",
            get(list_faults::<H>).post(add_faults::<H>).put(replace_faults::<H>).delete(clear_faults::<H>),
        )
        .route("/faults/{name}", delete(remove_fault::<H>))
        .route("/reset", post(reset::<H>))
        .fallback(not_found)
}

/// `router` with every route, added before this, refusing callers that are
/// not loopback ones (see the module's docs).
pub fn loopback_only_routes<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    router.layer(axum::middleware::from_fn(loopback_only))
}

/// Refuses a request not from a loopback caller (see the module's docs).
async fn loopback_only(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let headers = request.headers();
    // HTTP/1.1 (RFC 9112 §3.2): a request with more than one Host is a 400.
    let hosts = headers.get_all(axum::http::header::HOST).iter().count();
    if hosts > 1 {
        return error(StatusCode::BAD_REQUEST, format!("a request has one Host header, not {hosts}"));
    }
    let host = headers.get(axum::http::header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(is_loopback_authority) {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "the control API answers loopback callers only: Host {:?} is not a loopback name",
                host.unwrap_or("")
            ),
        );
    }
    if let Some(origin) = headers.get(axum::http::header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let authority = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
        if !authority.is_some_and(is_loopback_authority) {
            return error(
                StatusCode::FORBIDDEN,
                format!("the control API answers loopback callers only: Origin {origin:?} is not a loopback page"),
            );
        }
    }
    next.run(request).await
}

/// `127.0.0.1:8080`, `localhost`, `[::1]:9` and the like.
pub fn is_loopback_authority(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(host, _)| host),
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The control API's routes for the simulated Editor.
pub fn router(editor: Arc<Editor>) -> Router {
    let routes = host_routes::<Editor>()
        .route("/reload", post(reload))
        .route("/crash", post(crash))
        .route("/restart", post(restart))
        .route("/settings", post(settings));
    loopback_only_routes(routes).with_state(editor)
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({"error": message.into()}))).into_response()
}

/// An optional JSON object body: empty means `{}`; otherwise why not.
fn body_object(body: &Bytes) -> Result<Value, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("the body must be a JSON object".into()),
        Err(e) => Err(format!("the body is not valid JSON: {e}")),
    }
}

async fn state<H: Host>(State(host): State<Arc<H>>) -> Json<Value> {
    Json(host.state_json())
}

async fn stats<H: Host>(State(host): State<Arc<H>>) -> Json<Value> {
    let mut stats = host.stats_json();
    stats["seed"] = host.seed().into();
    stats["faults"] = host.faults().to_json();
    Json(stats)
}

/// Rules from a body: one rule, an array, or `{"faults": [...]}`.
fn rules_from(body: &Bytes) -> Result<Vec<RuleSpec>, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("the body is not valid JSON: {e}"))?;
    let value = match value {
        Value::Object(mut o) if o.contains_key("faults") && !o.contains_key("fault") => {
            o.remove("faults").unwrap_or(Value::Null)
        }
        v => v,
    };
    let list = match value {
        Value::Array(list) => list,
        v @ Value::Object(_) => vec![v],
        _ => return Err("expected a rule object or an array of rules".into()),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, v)| serde_json::from_value(v).map_err(|e| format!("rule {}: {e}", i + 1)))
        .collect()
}

fn fault_error(err: &FaultError) -> Response {
    let status = match err {
        FaultError::Invalid { .. } => StatusCode::BAD_REQUEST,
        FaultError::Duplicate(_) => StatusCode::CONFLICT,
        FaultError::NotFound(_) => StatusCode::NOT_FOUND,
    };
    error(status, err.to_string())
}

async fn list_faults<H: Host>(State(host): State<Arc<H>>) -> Json<Value> {
    Json(host.faults().to_json())
}

/// Rules from a body that this host can carry out; why not (a 400).
fn acceptable_rules<H: Host>(host: &H, body: &Bytes) -> Result<Vec<RuleSpec>, String> {
    let rules = rules_from(body)?;
    match rules.iter().find_map(|r| host.refuses(r)) {
        Some(why) => Err(why),
        None => Ok(rules),
    }
}

async fn add_faults<H: Host>(State(host): State<Arc<H>>, body: Bytes) -> Response {
    let rules = match acceptable_rules(&*host, &body) {
        Ok(rules) => rules,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    match host.faults().add(rules) {
        Ok(names) => (StatusCode::CREATED, Json(json!({"added": names}))).into_response(),
        Err(err) => fault_error(&err),
    }
}

async fn replace_faults<H: Host>(State(host): State<Arc<H>>, body: Bytes) -> Response {
    let rules = match acceptable_rules(&*host, &body) {
        Ok(rules) => rules,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    match host.faults().replace(rules) {
        Ok(names) => Json(json!({"faults": names})).into_response(),
        Err(err) => fault_error(&err),
    }
}

async fn clear_faults<H: Host>(State(host): State<Arc<H>>) -> Json<Value> {
    host.faults().clear();
    Json(json!({"cleared": true}))
}

async fn remove_fault<H: Host>(State(host): State<Arc<H>>, Path(name): Path<String>) -> Response {
    match host.faults().remove(&name) {
        Ok(()) => Json(json!({"removed": name})).into_response(),
        Err(err) => fault_error(&err),
    }
}

async fn reset<H: Host>(State(host): State<Arc<H>>) -> Json<Value> {
    host.reset();
    Json(json!({"reset": true}))
}

async fn reload(State(editor): State<Arc<Editor>>, body: Bytes) -> Response {
    let body = match body_object(&body) {
        Ok(body) => body,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let millis = |name: &str| match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            v.as_u64().map(|ms| Some(Duration::from_millis(ms))).ok_or(format!("{name} must be a non-negative integer"))
        }
    };
    let (downtime, tools_ready_delay) = match (millis("downtimeMs"), millis("toolsReadyDelayMs")) {
        (Ok(d), Ok(t)) => (d, t),
        (Err(why), _) | (_, Err(why)) => return error(StatusCode::BAD_REQUEST, why),
    };
    let flag = |name: &str| match body.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{name} must be a boolean")),
    };
    let (move_port, wait) = match (flag("movePort"), flag("wait")) {
        (Ok(m), Ok(w)) => (m, w),
        (Err(why), _) | (_, Err(why)) => return error(StatusCode::BAD_REQUEST, why),
    };
    let options = ReloadOptions { downtime, move_port, tools_ready_delay };
    if !wait {
        // Answered once the reload has begun (the listener closed, clients
        // told, the discovery file saying reloading), so a call made after
        // this answer meets the reload, never the domain before it.
        return match editor.request_reload_begun(options).await {
            Ok(()) => (StatusCode::ACCEPTED, Json(json!({"accepted": true}))).into_response(),
            Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "the Editor did not reload: it has crashed or quit"),
        };
    }
    let (tx, rx) = oneshot::channel();
    editor.request_reload(options, Some(tx));
    match rx.await {
        Ok(report) => Json(serde_json::to_value(report).unwrap_or(Value::Null)).into_response(),
        Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "the Editor quit before the reload finished"),
    }
}

/// A field of a body object: absent or `null` is `None`; a wrong type is
/// the message of a 400.
fn optional<T: serde::de::DeserializeOwned>(body: &Value, name: &str, what: &str) -> Result<Option<T>, String> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|_| format!("{name} must be {what}")),
    }
}

async fn crash(State(editor): State<Arc<Editor>>, body: Bytes) -> Response {
    let body = match body_object(&body) {
        Ok(body) => body,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let fields = (
        optional::<u64>(&body, "restartAfterMs", "a non-negative integer"),
        optional::<bool>(&body, "movePort", "a boolean"),
        optional::<bool>(&body, "wait", "a boolean"),
    );
    let (restart_after_ms, move_port, wait) = match fields {
        (Ok(r), Ok(m), Ok(w)) => (r, m.unwrap_or(false), w.unwrap_or(false)),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return error(StatusCode::BAD_REQUEST, e),
    };
    if editor.is_crashed() {
        return error(StatusCode::CONFLICT, "the Editor has already crashed (POST /restart starts a new one)");
    }
    let options = CrashOptions { restart_after: restart_after_ms.map(|ms| editor.faults.scaled(ms)), move_port };
    if !(wait && options.restart_after.is_some()) {
        editor.request_crash(options, None);
        return (StatusCode::ACCEPTED, Json(json!({"accepted": true}))).into_response();
    }
    let (tx, rx) = oneshot::channel();
    editor.request_crash(options, Some(tx));
    match rx.await {
        Ok(report) => Json(serde_json::to_value(report).unwrap_or(Value::Null)).into_response(),
        Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "the Editor quit before a new process started"),
    }
}

async fn restart(State(editor): State<Arc<Editor>>, body: Bytes) -> Response {
    let body = match body_object(&body) {
        Ok(body) => body,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let move_port = match optional::<bool>(&body, "movePort", "a boolean") {
        Ok(m) => m.unwrap_or(false),
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    if !editor.is_crashed() {
        return error(StatusCode::CONFLICT, "the Editor is running (POST /crash first)");
    }
    let (tx, rx) = oneshot::channel();
    editor.request_restart(move_port, Some(tx));
    match rx.await {
        Ok(report) => Json(serde_json::to_value(report).unwrap_or(Value::Null)).into_response(),
        Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "the Editor quit before a new process started"),
    }
}

async fn hang<H: Host>(State(host): State<Arc<H>>, body: Bytes) -> Response {
    let body = match body_object(&body) {
        Ok(body) => body,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let ms = match optional::<u64>(&body, "ms", "a non-negative integer") {
        Ok(ms) => ms,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    host.hang().start(host.faults(), ms.map(|ms| host.faults().scaled(ms)), None);
    Json(json!({"hung": true})).into_response()
}

async fn end_hang<H: Host>(State(host): State<Arc<H>>) -> Json<Value> {
    host.hang().end();
    Json(json!({"hung": false}))
}

async fn quit<H: Host>(State(host): State<Arc<H>>) -> Response {
    host.quit();
    (StatusCode::ACCEPTED, Json(json!({"accepted": true}))).into_response()
}

async fn settings(State(editor): State<Arc<Editor>>, body: Bytes) -> Response {
    let patch = match body_object(&body) {
        Ok(patch) => patch,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    match editor.update_settings(patch) {
        Ok(settings) => Json(serde_json::to_value(settings).unwrap_or(Value::Null)).into_response(),
        Err(message) => error(StatusCode::BAD_REQUEST, message),
    }
}

async fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "no such endpoint; try GET /state, GET /stats, POST /reload, POST /quit, POST /crash, POST /restart, \
         POST|DELETE /hang, POST /settings, GET|POST|PUT|DELETE /faults, DELETE /faults/NAME, POST /reset",
    )
}

/// Why a control call failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("cannot reach the control API at {addr}: {source}")]
    Connect { addr: SocketAddr, source: std::io::Error },
    #[error("control API HTTP error: {0}")]
    Http(#[from] hyper::Error),
    #[error("control API answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("control API answered with invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("invalid control URL {0:?} (expected http://127.0.0.1:PORT)")]
    Url(String),
}

/// A client for the control API.
#[derive(Clone, Debug)]
pub struct ControlClient {
    addr: SocketAddr,
}

impl ControlClient {
    pub fn new(addr: SocketAddr) -> Self {
        ControlClient { addr }
    }

    /// From the `control` URL of the listening line (`http://127.0.0.1:N`).
    pub fn from_url(url: &str) -> Result<Self, ControlError> {
        let rest = url.strip_prefix("http://").ok_or_else(|| ControlError::Url(url.to_owned()))?;
        let addr = rest.trim_end_matches('/').parse().map_err(|_| ControlError::Url(url.to_owned()))?;
        Ok(ControlClient { addr })
    }

    pub async fn get(&self, path: &str) -> Result<Value, ControlError> {
        self.request("GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Result<Value, ControlError> {
        self.request("POST", path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Result<Value, ControlError> {
        self.request("PUT", path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Result<Value, ControlError> {
        self.request("DELETE", path, None).await
    }

    /// Reloads and waits until the Editor listens again; returns where.
    pub async fn reload(&self, downtime_ms: u64, move_port: bool) -> Result<Value, ControlError> {
        self.post("/reload", json!({"downtimeMs": downtime_ms, "movePort": move_port, "wait": true})).await
    }

    async fn request(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, ControlError> {
        let stream = tokio::net::TcpStream::connect(self.addr)
            .await
            .map_err(|source| ControlError::Connect { addr: self.addr, source })?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        let bytes = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .body(Full::new(bytes))
            .map_err(|e| ControlError::Url(e.to_string()))?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        if !status.is_success() {
            return Err(ControlError::Status {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).into_owned(),
            });
        }
        Ok(serde_json::from_slice(&body)?)
    }
}

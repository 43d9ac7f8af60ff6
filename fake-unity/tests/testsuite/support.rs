//! Test support: a copy of the fixture project, a fake Editor on it, and a
//! small editor-link client whose waits always name their timeout.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use editor_link::{
    connection::{Connection, Ending, Options, Outgoing, Received, Receiver, Sender},
    framing::{DEFAULT_RESPONSE_LIMIT, Framing},
    jsonrpc::{ErrorObject, Id, Message, Notification, Request, Response},
};
use fake_unity::{Config, FakeUnity};
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// How long any single wait in these tests may take before it fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// The repository's fixture project.
pub fn fixture_project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/unity-project")
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Copies a folder recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    fake_unity::copy_dir(from, to).unwrap();
}

/// A fake Editor on a private copy of the fixture project.
pub struct TestEditor {
    pub fake: FakeUnity,
    pub project: tempfile::TempDir,
}

impl TestEditor {
    pub async fn start() -> TestEditor {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(configure: impl FnOnce(&mut Config)) -> TestEditor {
        let project = tempfile::tempdir().unwrap();
        copy_dir(&fixture_project(), project.path());
        let mut config = Config::new(project.path());
        config.seed = Some(42);
        config.state.editor.reload_downtime_ms = 100;
        config.state.editor.tools_ready_delay_ms = 20;
        config.state.compile.duration_ms = 20;
        // These tests are about everything but the token (token.rs is about
        // it): clients that send it do, and those that send raw bytes or
        // come through a proxy need not.
        config.state.settings.allow_clients_without_token = true;
        configure(&mut config);
        let fake = FakeUnity::start(config).await.unwrap();
        TestEditor { fake, project }
    }

    pub fn port(&self) -> u16 {
        self.fake.port()
    }

    pub fn path(&self) -> &Path {
        self.project.path()
    }

    /// A client that sends the Editor's token, as a client that can read
    /// the project's discovery file does.
    pub async fn connect(&self) -> Client {
        self.connect_with(Framing::Header).await
    }

    pub async fn connect_with(&self, framing: Framing) -> Client {
        Client::connect(self.port(), framing).await.with_token(self.token())
    }

    /// The token the discovery file publishes, if any.
    pub fn token(&self) -> Option<String> {
        editor_link::discovery::DiscoveryFile::read(self.path()).ok().and_then(|file| file.token)
    }

    /// The discovery file, parsed.
    pub fn discovery(&self) -> editor_link::discovery::DiscoveryFile {
        editor_link::discovery::DiscoveryFile::read(self.path()).unwrap()
    }

    pub async fn state(&self) -> Value {
        self.fake.control().get("/state").await.unwrap()
    }
}

/// Waits for `condition` to hold, polling; fails naming what it waited for.
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "timed out after {WAIT:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A minimal editor-link client, over the editor link's own connection.
pub struct Client {
    sender: Sender,
    receiver: Receiver,
    writer: tokio::task::JoinHandle<()>,
    next_id: u64,
    /// Sent as `x-token` with every request.
    token: Option<String>,
    /// Messages read while looking for something else.
    pub backlog: Vec<Message>,
}

impl Client {
    pub async fn connect(port: u16, framing: Framing) -> Client {
        let stream = tokio::time::timeout(WAIT, TcpStream::connect(("127.0.0.1", port)))
            .await
            .unwrap_or_else(|_| panic!("timed out after {WAIT:?} connecting to port {port}"))
            .unwrap_or_else(|e| panic!("cannot connect to port {port}: {e}"));
        let Connection { sender, receiver, writer } =
            Connection::tcp(stream, Options::client(framing, DEFAULT_RESPONSE_LIMIT));
        Client { sender, receiver, writer, next_id: 1, token: None, backlog: Vec::new() }
    }

    /// A client over `connection` (a Unix socket's, say).
    #[cfg(unix)]
    pub fn over(connection: Connection) -> Client {
        let Connection { sender, receiver, writer } = connection;
        Client { sender, receiver, writer, next_id: 1, token: None, backlog: Vec::new() }
    }

    pub fn with_token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// Closes the connection now (a dropped client closes it once its writer
    /// task next runs).
    pub async fn close(self) {
        self.sender.end(Ending::Graceful);
        let _ = self.writer.await;
    }

    /// Numbers this client's next requests from `first` (ids must stay
    /// unique across reconnects, protocol §5).
    pub fn ids_from(mut self, first: u64) -> Self {
        self.next_id = first;
        self
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.sender.send(Outgoing::raw(bytes.to_vec()));
    }

    /// Sends a message; a request carries this client's token.
    pub async fn send(&mut self, message: &Message) {
        match message {
            Message::Request(request) if self.token.is_some() => {
                let request = request.clone().with_token(self.token.as_deref());
                self.sender.send_message(&Message::Request(request), None);
            }
            _ => {
                self.sender.send_message(message, None);
            }
        }
    }

    /// Sends a request with a fresh numeric id; returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Id {
        let id = Id::from(self.next_id);
        self.next_id += 1;
        self.send(&Message::Request(Request::new(id.clone(), method, params))).await;
        id
    }

    /// The next message, or `None` at a clean end of stream.
    pub async fn recv(&mut self) -> Option<Message> {
        if !self.backlog.is_empty() {
            return Some(self.backlog.remove(0));
        }
        self.read_message().await
    }

    async fn read_message(&mut self) -> Option<Message> {
        let received = tokio::time::timeout(WAIT, self.receiver.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out after {WAIT:?} waiting for a message"));
        match received {
            Received::Body(body) => Some(
                Message::parse(&body)
                    .unwrap_or_else(|e| panic!("bad message {:?}: {e}", String::from_utf8_lossy(&body))),
            ),
            Received::TooLarge { size, .. } => panic!("the Editor sent a frame of {size} bytes, over the limit"),
            Received::Broken(err) => panic!("the Editor broke the framing: {err}"),
            Received::Closed | Received::Lost(_) => None,
        }
    }

    /// Frame bodies as they come, JSON or not, up to and including the one
    /// `last` accepts.
    pub async fn bodies_until(&mut self, mut last: impl FnMut(&[u8]) -> bool) -> Vec<Vec<u8>> {
        let mut bodies = Vec::new();
        loop {
            let received = tokio::time::timeout(WAIT, self.receiver.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out after {WAIT:?} waiting for a frame"));
            match received {
                Received::Body(body) => {
                    let done = last(&body);
                    bodies.push(body.to_vec());
                    if done {
                        return bodies;
                    }
                }
                other => panic!("expected a frame, got {other:?}"),
            }
        }
    }

    /// Reads until the response to `id`, keeping other messages in the backlog.
    pub async fn response(&mut self, id: &Id) -> Response {
        if let Some(pos) =
            self.backlog.iter().position(|m| matches!(m, Message::Response(r) if r.id.as_ref() == Some(id)))
        {
            let Message::Response(r) = self.backlog.remove(pos) else { unreachable!() };
            return r;
        }
        loop {
            match self.read_message().await {
                Some(Message::Response(r)) if r.id.as_ref() == Some(id) => return r,
                Some(other) => self.backlog.push(other),
                None => panic!("connection closed before the response to {id}"),
            }
        }
    }

    /// The next response with a `null` id (an answer to an unreadable frame).
    pub async fn null_id_error(&mut self) -> ErrorObject {
        loop {
            match self.recv().await {
                Some(Message::Response(Response { id: None, outcome: Err(e) })) => return e,
                Some(Message::Notification(_)) => {}
                other => panic!("expected an error response with a null id, got {other:?}"),
            }
        }
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Response {
        let id = self.request(method, params).await;
        self.response(&id).await
    }

    /// Calls and returns the result, failing on an error response.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        match self.call(method, params).await.outcome {
            Ok(result) => result,
            Err(e) => panic!("{method} failed: {e}"),
        }
    }

    /// Calls and returns the error, failing on a result.
    pub async fn err(&mut self, method: &str, params: Value) -> ErrorObject {
        match self.call(method, params).await.outcome {
            Ok(result) => panic!("{method} succeeded, expected an error: {result}"),
            Err(e) => e,
        }
    }

    /// Waits for a notification called `method`, keeping others.
    pub async fn notification(&mut self, method: &str) -> Notification {
        if let Some(pos) = self.backlog.iter().position(|m| matches!(m, Message::Notification(n) if n.method == method))
        {
            let Message::Notification(n) = self.backlog.remove(pos) else { unreachable!() };
            return n;
        }
        loop {
            match self.read_message().await {
                Some(Message::Notification(n)) if n.method == method => return n,
                Some(other) => self.backlog.push(other),
                None => panic!("connection closed before a {method} notification"),
            }
        }
    }

    /// The first notification called `method` already read (kept in the
    /// backlog while waiting for a response), taken out of it.
    pub fn take_notification(&mut self, method: &str) -> Option<Notification> {
        let pos = self.backlog.iter().position(|m| matches!(m, Message::Notification(n) if n.method == method))?;
        let Message::Notification(n) = self.backlog.remove(pos) else { unreachable!() };
        Some(n)
    }

    /// Reads until the Editor closes the connection; returns what arrived.
    pub async fn until_closed(&mut self) -> Vec<Message> {
        let mut seen = std::mem::take(&mut self.backlog);
        while let Some(m) = self.read_message().await {
            seen.push(m);
        }
        seen
    }

    /// Sends a notification (no id).
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(&Message::Notification(Notification::new(method, params))).await;
    }
}

/// The `data.type` of an error.
pub fn kind(e: &ErrorObject) -> &str {
    e.data_type().unwrap_or("")
}

/// `{}` for calls without parameters.
pub fn none() -> Value {
    json!({})
}

/// Writes the project's Enter Play Mode settings as Unity does: whether
/// entering play mode reloads the domain (it does in the fixture project,
/// as by Unity's default).
pub fn switch_domain_reload(project: &Path, reload: bool) {
    let path = project.join(fake_unity::editor::project_settings::EDITOR_SETTINGS);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, fake_unity::editor::project_settings::with_domain_reload(&text, reload)).unwrap();
}

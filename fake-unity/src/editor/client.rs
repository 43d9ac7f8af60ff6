//! One connected client of the simulated Editor, and what it is sent.

use super::*;

/// One connected client.
#[derive(Debug)]
pub struct Client {
    pub id: u64,
    pub peer: crate::server::Peer,
    pub connected_at: SystemTime,
    pub(super) name: Mutex<String>,
    /// Its connection, as faults see it (the sender of its frames).
    pub wire: Wire,
    pub(super) stats: Arc<Stats>,
    /// How ids and errors are encoded in this Editor's answers.
    pub(super) messages: MessagePolicy,
    pub(super) reply_framing: ReplyFraming,
}

impl Client {
    /// Queued bytes above which a client's requests are no longer read.
    pub const QUEUE_LIMIT: usize = 8 * 1024 * 1024;
    /// Queued bytes above which notifications are no longer queued for a
    /// client (it is not reading; its requests already wait).
    pub const NOTIFICATION_LIMIT: usize = 64 * 1024 * 1024;

    /// Bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.wire.sender.queued_bytes()
    }

    /// Waits until at most `limit` bytes are queued.
    pub(crate) async fn room(&self, limit: usize) {
        self.wire.sender.room(limit).await;
    }

    /// The name set with `set-client-name`.
    pub fn name(&self) -> String {
        lock(&self.name).clone()
    }

    pub fn set_name(&self, name: &str) {
        *lock(&self.name) = name.to_owned();
    }

    /// The framing this client speaks, once its first byte has arrived;
    /// header framing (the primary one) until then.
    pub fn framing(&self) -> Framing {
        if self.reply_framing == ReplyFraming::AlwaysNewline {
            return Framing::Newline;
        }
        self.wire.sender.framing()
    }

    /// Ends the connection: gracefully (what is queued goes out first), or
    /// at once.
    pub fn end(&self, ending: Ending) {
        self.wire.end(ending);
    }

    /// How the connection is ending.
    pub fn ending(&self) -> Ending {
        self.wire.sender.ending()
    }

    /// Resolves once the connection is closing.
    pub async fn closed(&self) {
        self.wire.sender.closed().await;
    }

    /// Queues a message for this client; false when the connection is gone.
    pub fn send(&self, message: &Message) -> bool {
        let method = match message {
            Message::Notification(n) => Some(n.method.as_str()),
            Message::Request(r) => Some(r.method.as_str()),
            Message::Response(_) => None,
        };
        self.send_for(message, method)
    }

    /// Queues the response to a `method` request.
    pub fn reply(&self, method: &str, response: Response) -> bool {
        self.send_for(&Message::Response(response), Some(method))
    }

    fn send_for(&self, message: &Message, method: Option<&str>) -> bool {
        if let Message::Response(r) = message {
            let echoed = r.id.as_ref().map(|id| self.messages.echo(id));
            if echoed != r.id {
                let mut r = r.clone();
                r.id = echoed;
                return self.send_for(&Message::Response(r), method);
            }
        }
        let (kind, is_error) = match message {
            Message::Response(r) => {
                self.stats.responses_sent.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = &r.outcome {
                    self.stats.count_error(e.kind());
                }
                (FrameKind::Response, r.outcome.is_err())
            }
            Message::Notification(_) => {
                self.stats.notifications_sent.fetch_add(1, Ordering::Relaxed);
                (FrameKind::Notification, false)
            }
            Message::Request(_) => (FrameKind::Request, false),
        };
        let body = match message {
            Message::Response(r) if r.outcome.is_err() && !self.messages.error_data => {
                let mut r = r.clone();
                if let Err(e) = &mut r.outcome {
                    e.data = None;
                }
                Message::Response(r).to_bytes()
            }
            // Megabytes of padding (the `responseSize` fault) take seconds to
            // serialise in a debug build: off the runtime's threads, which
            // serve every other Editor and case meanwhile (issue 34).
            Message::Response(Response { outcome: Ok(Value::Object(result)), .. })
                if result.contains_key(crate::serving::effects::PADDING) =>
            {
                editor_link::blocking(|| message.to_bytes())
            }
            _ => message.to_bytes(),
        };
        if kind == FrameKind::Notification && self.queued_bytes() > Client::NOTIFICATION_LIMIT {
            tracing::warn!(
                client = self.id,
                queued = self.queued_bytes(),
                "client is not reading: notification dropped"
            );
            return false;
        }
        if self.wire.sender.is_closed() {
            return false;
        }
        let mut outgoing = Outgoing::message(message, method);
        outgoing.body = Bytes::from(body);
        debug_assert_eq!((outgoing.kind, outgoing.is_error), (kind, is_error));
        self.wire.sender.send(outgoing);
        true
    }
}

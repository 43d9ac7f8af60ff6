//! The clients the benchmark drives: a bridge as a child process spoken to
//! over MCP stdio by a minimal JSON-lines client (no SDK, no logging, so the
//! client's own cost stays out of the figures), and a bare editor-link
//! connection straight to the Editor.

use std::{
    collections::HashMap,
    ffi::OsString,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use bytes::BytesMut;
use editor_link::{
    framing::{DEFAULT_RESPONSE_LIMIT, Frame, FrameDecoder, Framing, encode_frame},
    jsonrpc::{Message, Request},
};
use futures_util::StreamExt;
use mcp_client::{McpClient, Stderr};
use serde_json::{Value, json};
use tokio::{
    io::AsyncWriteExt,
    net::{
        TcpStream,
        tcp::{OwnedReadHalf, OwnedWriteHalf},
    },
    process::Command,
};
use tokio_util::codec::FramedRead;

/// How long any one answer may take before the measurement fails.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// A bridge to measure.
#[derive(Clone, Debug)]
pub struct BridgeUnderTest {
    /// How the tables name it.
    pub label: String,
    launch: Launch,
}

#[derive(Clone, Debug)]
enum Launch {
    /// Ours: `program ARGS… --project DIR --dev`, in the project's folder;
    /// it finds the Editor through the project's discovery file, as for users.
    Ours { program: PathBuf, args: Vec<OsString> },
    /// Any MCP stdio command line, run by `sh -c` in the project's folder
    /// with `UNITY_TCP_PORT` set to the Editor's port.
    Command(String),
}

impl BridgeUnderTest {
    /// Our bridge: `program` with `args` before its own options (the
    /// embedded bridge is `unity-conformance bridge --`).
    pub fn ours(label: &str, program: PathBuf, args: Vec<OsString>) -> BridgeUnderTest {
        BridgeUnderTest { label: label.to_owned(), launch: Launch::Ours { program, args } }
    }

    /// Another bridge, as a shell command line.
    pub fn command(line: &str) -> BridgeUnderTest {
        BridgeUnderTest { label: line.to_owned(), launch: Launch::Command(line.to_owned()) }
    }

    pub fn is_ours(&self) -> bool {
        matches!(self.launch, Launch::Ours { .. })
    }

    /// Starts it for the Editor of `project` listening on `port`; `extra`
    /// are options only our bridge understands (ignored for others).
    pub fn spawn(&self, project: &Path, port: u16, extra: &[&str]) -> anyhow::Result<McpChild> {
        let mut command = match &self.launch {
            Launch::Ours { program, args } => {
                let mut command = Command::new(program);
                command.args(args).arg("--project").arg(project).args(["--dev", "--log-level", "error"]).args(extra);
                command.env_remove("UNITY_TCP_PORT");
                command
            }
            Launch::Command(line) => {
                // `exec` so that the shell becomes the bridge (its memory is
                // the bridge's); children it starts are counted too.
                let mut command = Command::new("sh");
                command.arg("-c").arg(format!("exec {line}")).env("UNITY_TCP_PORT", port.to_string());
                command
            }
        };
        command.current_dir(project);
        let client = McpClient::spawn(command, Stderr::Discard)
            .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", self.label))?
            .named("unity-conformance-bench");
        Ok(McpChild { client, scan_echo: false })
    }
}

/// What `ping` answers with a message only the Editor could have echoed:
/// `Unity MCP Bridge received: bench-N`.
pub const ECHO_PREFIX: &str = "bench-";
const ECHO_MARKER: &[u8] = b"received: bench-";

/// The `N` of the first `received: bench-N` in `line`.
fn echo_in(line: &[u8]) -> Option<u64> {
    let at = line.windows(ECHO_MARKER.len()).position(|w| w == ECHO_MARKER)? + ECHO_MARKER.len();
    let digits: Vec<u8> = line[at..].iter().copied().take_while(u8::is_ascii_digit).collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// How one of many pipelined calls was answered.
#[derive(Clone, Copy, Debug)]
pub struct Answered {
    /// A JSON-RPC error or `isError`.
    pub failed: bool,
    /// The echo the call asked for (`ping`), if any.
    pub echo_expected: Option<u64>,
    /// The echo its answer carried.
    pub echo: Option<u64>,
}

/// An answer as the benchmark needs it: whether it succeeded, and its size.
#[derive(Debug)]
pub struct Answer {
    pub id: u64,
    /// The error, if the request failed or the tool reported one.
    pub error: Option<String>,
    /// The answer's line length in bytes.
    pub bytes: usize,
    /// The answer, parsed only when asked (large results are not).
    pub value: Option<Value>,
    /// The `N` of `received: bench-N` in it, when the child scans for it.
    pub echo: Option<u64>,
}

/// A bridge started by the benchmark, spoken to by the project's one MCP
/// client; answers are read as lines and judged from their head, so a
/// large result is never built.
pub struct McpChild {
    client: McpClient,
    /// Look for `received: bench-N` in every answer (small answers only).
    pub scan_echo: bool,
}

impl std::fmt::Debug for McpChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpChild").field("pid", &self.client.pid()).finish_non_exhaustive()
    }
}

impl McpChild {
    /// Writes a request; returns its id.
    pub async fn send(&mut self, method: &str, params: &Value) -> anyhow::Result<u64> {
        let id = self.client.request(method, params.clone()).await?;
        id.as_u64().ok_or_else(|| anyhow::anyhow!("the client made a non-integer id {id}"))
    }

    /// The next answer to one of our requests (notifications and the
    /// server's own requests are passed over). `parse` keeps the answer.
    pub async fn next_answer(&mut self, parse: bool) -> anyhow::Result<Answer> {
        self.next_answer_within(ANSWER_TIMEOUT, parse)
            .await?
            .ok_or_else(|| anyhow::anyhow!("no answer within {ANSWER_TIMEOUT:?}"))
    }

    /// The next answer, or `None` when none comes within `timeout` (a line
    /// cut by the timeout is kept and finished by the next read).
    pub async fn next_answer_within(&mut self, timeout: Duration, parse: bool) -> anyhow::Result<Option<Answer>> {
        let scan_echo = self.scan_echo;
        loop {
            let Some(line) = self.client.next_line(timeout).await? else { return Ok(None) };
            // Enough of the message to judge it without building a tree of
            // a 64 MiB result.
            #[derive(serde::Deserialize)]
            struct Head {
                id: Option<Value>,
                method: Option<serde::de::IgnoredAny>,
                error: Option<Value>,
                result: Option<ResultHead>,
            }
            #[derive(serde::Deserialize)]
            struct ResultHead {
                #[serde(rename = "isError", default)]
                is_error: bool,
            }
            let head: Head = serde_json::from_slice(line)
                .map_err(|e| anyhow::anyhow!("the bridge wrote a line that is not JSON-RPC: {e}"))?;
            let Some(id) = head.id.as_ref().and_then(Value::as_u64).filter(|_| head.method.is_none()) else {
                continue;
            };
            let value = if parse { Some(serde_json::from_slice::<Value>(line)?) } else { None };
            let error = match (&head.error, &head.result) {
                (Some(error), _) => Some(error.to_string()),
                (None, Some(result)) if result.is_error => Some(match &value {
                    Some(v) => v["result"]["content"][0]["text"].as_str().unwrap_or("isError").to_owned(),
                    None => "the tool reported an error".to_owned(),
                }),
                (None, Some(_)) => None,
                (None, None) => Some("an answer with neither result nor error".to_owned()),
            };
            let echo = if scan_echo { echo_in(line) } else { None };
            // The line with its newline, as the bridge wrote it.
            return Ok(Some(Answer { id, error, bytes: line.len() + 1, value, echo }));
        }
    }

    /// The answer to `id` (answers to other requests are passed over).
    pub async fn answer_to(&mut self, id: u64, parse: bool) -> anyhow::Result<Answer> {
        loop {
            let answer = self.next_answer(parse).await?;
            if answer.id == id {
                return Ok(answer);
            }
        }
    }

    /// Sends a request and waits for its answer.
    pub async fn request(&mut self, method: &str, params: &Value) -> anyhow::Result<Answer> {
        let id = self.send(method, params).await?;
        self.answer_to(id, true).await
    }

    /// `initialize`, then `notifications/initialized`.
    pub async fn initialize(&mut self) -> anyhow::Result<()> {
        self.client.initialize().await?;
        Ok(())
    }

    /// Every tool's name (all pages of `tools/list`).
    pub async fn tool_names(&mut self) -> anyhow::Result<Vec<String>> {
        let mut names = Vec::new();
        let mut cursor: Option<Value> = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let answer = self.request("tools/list", &params).await?;
            if let Some(error) = answer.error {
                anyhow::bail!("tools/list failed: {error}");
            }
            let result = answer.value.map(|mut v| v["result"].take()).unwrap_or_default();
            names.extend(
                result["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).map(String::from),
            );
            match result.get("nextCursor").filter(|c| !c.is_null()) {
                Some(next) => cursor = Some(next.clone()),
                None => return Ok(names),
            }
        }
    }

    /// One `tools/call`; an error result is an error.
    pub async fn call(&mut self, tool: &str, arguments: &Value) -> anyhow::Result<Answer> {
        let answer = self.request("tools/call", &json!({"name": tool, "arguments": arguments})).await?;
        match answer.error {
            Some(error) => anyhow::bail!("{tool} failed: {error}"),
            None => Ok(answer),
        }
    }

    /// `total` calls with `in_flight` outstanding at a time, the `n`th with
    /// `arguments(n)`; the time they took and how each was answered:
    /// `(error, the echo expected, the echo found)`.
    pub async fn pipelined(
        &mut self,
        tool: &str,
        mut arguments: impl FnMut() -> (Value, Option<u64>),
        total: usize,
        in_flight: usize,
    ) -> anyhow::Result<(Duration, Vec<Answered>)> {
        let started = Instant::now();
        let mut expected = HashMap::new();
        let mut answered = Vec::with_capacity(total);
        let mut sent = 0;
        while answered.len() < total {
            while sent < total && sent - answered.len() < in_flight.max(1) {
                let (arguments, echo) = arguments();
                let id = self.send("tools/call", &json!({"name": tool, "arguments": arguments})).await?;
                expected.insert(id, echo);
                sent += 1;
            }
            let answer = self.next_answer(false).await?;
            let Some(echo) = expected.remove(&answer.id) else { continue };
            answered.push(Answered { failed: answer.error.is_some(), echo_expected: echo, echo: answer.echo });
        }
        Ok((started.elapsed(), answered))
    }

    pub fn pid(&self) -> anyhow::Result<u32> {
        self.client.pid().ok_or_else(|| anyhow::anyhow!("the bridge has exited"))
    }

    /// Resident memory of the bridge and the processes it started, KiB.
    pub fn rss_kb(&self) -> anyhow::Result<u64> {
        memory_kb(self.pid()?, "VmRSS:")
    }

    /// CPU time (user and system) the bridge has used so far.
    pub fn cpu_time(&self) -> anyhow::Result<Duration> {
        let pid = self.pid()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_err(|e| anyhow::anyhow!("cannot read /proc/{pid}/stat (Linux needed): {e}"))?;
        // After `(comm)`: state is field 3, utime and stime fields 14 and 15.
        let fields: Vec<&str> =
            stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
        let ticks: u64 = fields.get(11..13).into_iter().flatten().filter_map(|f| f.parse::<u64>().ok()).sum();
        anyhow::ensure!(fields.len() > 13, "/proc/{pid}/stat has too few fields");
        // USER_HZ is 100 on every Linux this runs on.
        Ok(Duration::from_millis(ticks * 10))
    }

    /// Peak resident memory since start (the sum of each process's peak), KiB.
    pub fn peak_rss_kb(&self) -> anyhow::Result<u64> {
        memory_kb(self.pid()?, "VmHWM:")
    }
}

/// A `/proc/PID/status` field summed over `pid` and its descendants (Linux).
fn memory_kb(pid: u32, field: &str) -> anyhow::Result<u64> {
    let tree =
        crate::stall_meter::process_tree(pid).map_err(|e| anyhow::anyhow!("cannot read /proc (Linux needed): {e}"))?;
    let mut total = 0;
    for next in tree {
        let status = std::fs::read_to_string(format!("/proc/{next}/status"));
        if let Some(kb) = status.ok().as_deref().and_then(|s| status_field_kb(s, field)) {
            total += kb;
        } else if next == pid {
            anyhow::bail!("no {field} in /proc/{pid}/status (has the bridge exited?)");
        }
    }
    Ok(total)
}

fn status_field_kb(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix(field)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A bare editor-link client (header framing), for the Editor's own
/// round-trip time and request rate: the floor the bridge is measured
/// against. It reads and writes on the calling task itself, without the
/// writer task of the editor link's `Connection`, so the floor carries no
/// cost the bridge does not also pay.
#[derive(Debug)]
pub struct DirectClient {
    reader: FramedRead<OwnedReadHalf, FrameDecoder>,
    writer: OwnedWriteHalf,
    next_id: u64,
    buffer: BytesMut,
    /// Sent with every request, as the bridge sends it.
    token: Option<String>,
}

impl DirectClient {
    pub async fn connect(port: u16, token: Option<String>) -> anyhow::Result<DirectClient> {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| anyhow::anyhow!("cannot connect to the Editor on port {port}: {e}"))?;
        stream.set_nodelay(true)?;
        let (read, writer) = stream.into_split();
        Ok(DirectClient {
            reader: FramedRead::new(read, FrameDecoder::new(Framing::Header, DEFAULT_RESPONSE_LIMIT)),
            writer,
            next_id: 1,
            buffer: BytesMut::new(),
            token,
        })
    }

    pub async fn send(&mut self, method: &str, params: &Value) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let request = Request::new(id, method, params.clone()).with_token(self.token.as_deref());
        let body = Message::Request(request).to_bytes();
        self.buffer.clear();
        encode_frame(Framing::Header, &body, &mut self.buffer)?;
        self.writer.write_all(&self.buffer).await?;
        Ok(id)
    }

    /// The next response (notifications are passed over); an error
    /// response is an error.
    pub async fn next_response(&mut self) -> anyhow::Result<u64> {
        loop {
            let frame = tokio::time::timeout(ANSWER_TIMEOUT, self.reader.next())
                .await
                .map_err(|_| anyhow::anyhow!("the Editor sent nothing within {ANSWER_TIMEOUT:?}"))?
                .ok_or_else(|| anyhow::anyhow!("the Editor closed the connection"))??;
            let Frame::Body(body) = frame else { anyhow::bail!("the Editor sent a frame over the limit") };
            let message: Value = serde_json::from_slice(&body)?;
            let Some(id) = message.get("id").and_then(Value::as_u64) else { continue };
            if let Some(error) = message.get("error") {
                anyhow::bail!("the Editor answered request {id} with an error: {error}");
            }
            return Ok(id);
        }
    }

    /// One request, waited for.
    pub async fn request(&mut self, method: &str, params: &Value) -> anyhow::Result<()> {
        let id = self.send(method, params).await?;
        while self.next_response().await? != id {}
        Ok(())
    }

    /// `total` requests with `in_flight` outstanding at a time.
    pub async fn pipelined(
        &mut self,
        method: &str,
        params: &Value,
        total: usize,
        in_flight: usize,
    ) -> anyhow::Result<()> {
        let (mut sent, mut done) = (0, 0);
        while done < total {
            while sent < total && sent - done < in_flight.max(1) {
                self.send(method, params).await?;
                sent += 1;
            }
            self.next_response().await?;
            done += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_read_in_kib() {
        let status = "Name:\tx\nVmHWM:\t   9000 kB\nVmRSS:\t    7104 kB\n";
        assert_eq!(status_field_kb(status, "VmRSS:"), Some(7104));
        assert_eq!(status_field_kb(status, "VmHWM:"), Some(9000));
        assert_eq!(status_field_kb(status, "VmSwap:"), None);
    }

    #[test]
    fn our_own_memory_is_readable() {
        let kb = memory_kb(std::process::id(), "VmRSS:").expect("this test runs on Linux");
        assert!(kb > 100, "{kb} kB");
    }
}

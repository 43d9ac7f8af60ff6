//! How an Editor accepts and keeps connections (protocol §1). Both Editors
//! listen on loopback and serve every client at once; the other values are
//! the deliberate defects' (`serve --defect`), set by `Defect::shape`.

/// Where the Editor listens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interfaces {
    /// 127.0.0.1 only (protocol §1).
    Loopback,
    /// Every interface (`all-interfaces`).
    All,
}

/// How connections are taken in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepting {
    /// Each served in its own task as soon as it is accepted (protocol §1).
    Concurrent,
    /// One connection served at a time; the others wait for it to close
    /// (`serializes-clients`).
    OneAtATime,
    /// The accept loop waits for a connection's first byte before the next
    /// accept, so a silent probe holds up everyone (`blocking-accept`).
    WaitsForFirstByte,
}

/// A connection the peer breaks (reset, cut mid-frame, bad framing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokenPeer {
    /// That connection ends; the listener goes on (protocol §1).
    Dropped,
    /// The whole Editor goes down with it (`fragile-listener`).
    StopsEditor,
}

/// What the Editor does with a client that sends and does not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backpressure {
    /// It stops reading that client while its answers wait to be written
    /// or 64 of its requests run; TCP holds the rest back (protocol §1).
    StopsReading,
    /// It reads on and queues every answer: its memory grows without bound
    /// (`queues-without-bound`).
    None,
}

/// What the Editor listens on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A TCP port of 127.0.0.1, published in a discovery file (protocol §1, §7).
    TcpPort,
    /// uLoopMCP 3's local socket, named after the project
    /// (`editor_link::endpoint::uloop3_endpoint`): a Unix domain socket,
    /// on Windows a named pipe; deleted while the domain reloads.
    ProjectSocket,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenerPolicy {
    pub transport: Transport,
    pub interfaces: Interfaces,
    pub accepting: Accepting,
    pub broken_peer: BrokenPeer,
    /// How many connections are served before the Editor runs out of them
    /// (`leaks-connections`: closed ones are never released); `None`: no limit.
    pub connections: Option<u64>,
    pub backpressure: Backpressure,
}

impl ListenerPolicy {
    pub const PROTOCOL: ListenerPolicy = ListenerPolicy {
        transport: Transport::TcpPort,
        interfaces: Interfaces::Loopback,
        accepting: Accepting::Concurrent,
        broken_peer: BrokenPeer::Dropped,
        connections: None,
        backpressure: Backpressure::StopsReading,
    };

    /// uLoopMCP 3: every client served in its own task (`Task.Run(HandleClientAsync)`,
    /// `UnityCliLoopBridgeServer.cs:307`), on its project's local socket.
    pub const ULOOP_3: ListenerPolicy = ListenerPolicy { transport: Transport::ProjectSocket, ..Self::PROTOCOL };
}

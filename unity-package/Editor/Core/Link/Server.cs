// The Editor's listener (§1, §2): loopback only, the preferred port or the
// next ten, many concurrent connections, framing detected per connection,
// requests dispatched concurrently (pipelining) and answered in completion
// order, notifications to every client, and the shutdown of a domain reload
// or a quit. Bad input gets the error of §2 and never takes the listener down.
//
// Socket work never needs Unity's main thread: in the Editor the server is
// started on it, where SynchronizationContext.Current is Unity's (its Post
// only queues work for the next Editor tick), so every await here is
// ConfigureAwait(false) and the loops start on the thread pool. A shutdown,
// called on the main thread before a reload or quit, never waits for a
// socket: it writes the notification only where the socket can take it now.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>One connected client.</summary>
    public sealed class ClientConnection
    {
        readonly TcpClient client;
        readonly NetworkStream stream;
        readonly SemaphoreSlim writeLock = new SemaphoreSlim(1, 1);
        readonly CancellationTokenSource closed = new CancellationTokenSource();

        // The last frame before closing (the shutdown notification), queued
        // behind a write in progress: whoever holds the write lock next, or
        // releases it, writes it and closes.
        byte[] lastFrame;

        /// <summary>How long a queued last frame may wait for the write ahead of it.</summary>
        static readonly TimeSpan LastFrameWait = TimeSpan.FromSeconds(5);

        internal ClientConnection(long id, TcpClient client)
        {
            Id = id;
            this.client = client;
            stream = client.GetStream();
            Endpoint = RemoteEndpointOf(client);
            ConnectedAt = DateTime.UtcNow;
        }

        /// <summary>The peer's address; "" when it has gone (a reset before we asked throws).</summary>
        static string RemoteEndpointOf(TcpClient client)
        {
            try
            {
                var endpoint = client.Client.RemoteEndPoint;
                return endpoint != null ? endpoint.ToString() : "";
            }
            catch (Exception)
            {
                return "";
            }
        }

        public long Id { get; }

        public string Endpoint { get; }

        public DateTime ConnectedAt { get; }

        /// <summary>What set-client-name said ("" until then).</summary>
        public string ClientName { get; set; } = "";

        /// <summary>The framing, once the first byte has come.</summary>
        public Framing? Framing { get; internal set; }

        internal NetworkStream Stream => stream;

        internal CancellationToken Closed => closed.Token;

        /// <summary>Writes one frame; false when the client has gone.</summary>
        internal async Task<bool> Send(byte[] body)
        {
            var framing = Framing ?? Core.Framing.Header;
            var frame = FrameEncoder.Encode(framing, body);
            await writeLock.WaitAsync().ConfigureAwait(false);
            try
            {
                if (closed.IsCancellationRequested)
                {
                    return false;
                }
                await stream.WriteAsync(frame, 0, frame.Length).ConfigureAwait(false);
                return true;
            }
            catch (Exception)
            {
                Close();
                return false;
            }
            finally
            {
                WriteLastFrameIfQueued();
                writeLock.Release();
            }
        }

        /// <summary>
        /// With the write lock held, off the main thread: the queued last
        /// frame (waiting up to a second for room: the client is reading what
        /// came before it), then the close.
        /// </summary>
        void WriteLastFrameIfQueued()
        {
            var last = Interlocked.Exchange(ref lastFrame, null);
            if (last == null)
            {
                return;
            }
            try
            {
                if (!closed.IsCancellationRequested)
                {
                    client.Client.SendTimeout = 1000;
                    client.Client.Send(last);
                }
            }
            catch (Exception)
            {
                // Gone, or it stopped reading: closed without it.
            }
            Close();
        }

        /// <summary>With the write lock held: a frame written only if the socket takes it at once.</summary>
        bool WriteNow(byte[] frame)
        {
            try
            {
                var socket = client.Client;
                if (!closed.IsCancellationRequested && socket.Poll(0, SelectMode.SelectWrite))
                {
                    // Writable: the send buffer has room for a small frame,
                    // so this returns at once; the timeout bounds the rest.
                    socket.SendTimeout = 50;
                    return socket.Send(frame) == frame.Length;
                }
            }
            catch (Exception)
            {
                // Gone, or full: closed without it.
            }
            return false;
        }

        /// <summary>
        /// The last frame (the shutdown notification), then the close, without
        /// ever waiting: for a shutdown on the main thread. With no write in
        /// progress it is written now if the socket can take it at once; with
        /// one (an answer going out), it is queued behind it and the writer
        /// sends it as it finishes, so a reading client always gets it. A
        /// client that stopped reading is closed without it: at once, or once
        /// the write ahead of it has waited <see cref="LastFrameWait"/>.
        /// Whether the frame was written, or queued behind a write.
        /// </summary>
        internal bool SendNowAndClose(byte[] body)
        {
            var frame = FrameEncoder.Encode(Framing ?? Core.Framing.Header, body);
            if (writeLock.Wait(0))
            {
                bool written;
                try
                {
                    written = WriteNow(frame);
                }
                finally
                {
                    writeLock.Release();
                }
                Close();
                return written;
            }
            Volatile.Write(ref lastFrame, frame);
            // The writer may have finished between the two looks: then it is
            // ours, written if the socket takes it at once (the main thread
            // waits for nothing).
            if (writeLock.Wait(0))
            {
                try
                {
                    var mine = Interlocked.Exchange(ref lastFrame, null);
                    if (mine != null)
                    {
                        WriteNow(mine);
                        Close();
                    }
                }
                finally
                {
                    writeLock.Release();
                }
                return true;
            }
            // A write that never ends (a client that stopped reading) does not keep it open.
            Task.Delay(LastFrameWait).ContinueWith(_ =>
            {
                Interlocked.Exchange(ref lastFrame, null);
                Close();
            });
            return true;
        }

        internal void Close()
        {
            if (closed.IsCancellationRequested)
            {
                return;
            }
            closed.Cancel();
            try
            {
                client.Close();
            }
            catch (Exception)
            {
                // Already gone.
            }
        }
    }

    /// <summary>
    /// notifications/progress for one request (§4): progress only ever
    /// increases, every notification is written before the answer, none after.
    /// </summary>
    sealed class ProgressReporter
    {
        readonly ClientConnection connection;
        readonly ToolContext context;
        double last = double.NegativeInfinity;
        bool done;
        Task sent = Task.FromResult(true);

        public ProgressReporter(ClientConnection connection, ToolContext context)
        {
            this.connection = connection;
            this.context = context;
        }

        public void Report(double progress, double? total, string message)
        {
            var id = context.RequestId;
            if (id == null)
            {
                return;
            }
            var parameters = new JObject { ["requestId"] = id.DeepClone(), ["progress"] = progress };
            if (total.HasValue)
            {
                parameters["total"] = total.Value;
            }
            if (!string.IsNullOrEmpty(message))
            {
                parameters["message"] = message;
            }
            var body = RpcWriter.Notification("notifications/progress", parameters);
            lock (this)
            {
                if (done || !(progress > last))
                {
                    return;
                }
                last = progress;
                sent = sent.ContinueWith(t => connection.Send(body)).Unwrap();
            }
        }

        /// <summary>Waits for what was reported to be written; later reports are dropped.</summary>
        public Task Finish()
        {
            lock (this)
            {
                done = true;
                return sent;
            }
        }
    }

    /// <summary>The editor-link server.</summary>
    public sealed class EditorServer
    {
        /// <summary>The default preferred port (§1).</summary>
        public const int DefaultPort = 8700;

        /// <summary>The largest request accepted (§2): 8 MiB.</summary>
        public const int DefaultRequestLimit = 8 * 1024 * 1024;

        /// <summary>
        /// Requests of one connection being run or answered at once. Past
        /// it the server stops reading that connection until one is
        /// written: a client that sends and never reads holds this many
        /// answers, not an unbounded queue of them, and TCP tells it to wait.
        /// </summary>
        public const int DefaultInFlightLimit = 64;

        readonly Dispatcher dispatcher;
        readonly object gate = new object();
        readonly Dictionary<long, ClientConnection> clients = new Dictionary<long, ClientConnection>();
        TcpListener listener;
        long nextId;

        public EditorServer(Dispatcher dispatcher)
        {
            this.dispatcher = dispatcher;
        }

        public int RequestLimit { get; set; } = DefaultRequestLimit;

        public int InFlightLimit { get; set; } = DefaultInFlightLimit;

        /// <summary>The port listened on (0 when stopped).</summary>
        public int Port { get; private set; }

        public bool IsRunning => listener != null;

        /// <summary>The clients connected now.</summary>
        public List<ClientConnection> Clients
        {
            get
            {
                lock (gate)
                {
                    return clients.Values.OrderBy(c => c.Id).ToList();
                }
            }
        }

        /// <summary>
        /// Listens on 127.0.0.1: <paramref name="preferredPort"/>, else the
        /// next ten (0: any free port). Returns the port.
        /// </summary>
        public int Start(int preferredPort)
        {
            if (listener != null)
            {
                throw new InvalidOperationException("the server is already running on port " + Port);
            }
            var candidates = preferredPort == 0 ? new[] { 0 } : Enumerable.Range(preferredPort, 11).Where(p => p <= 65535).ToArray();
            SocketException last = null;
            foreach (var port in candidates)
            {
                var candidate = new TcpListener(IPAddress.Loopback, port);
                try
                {
                    candidate.Start(128);
                }
                catch (SocketException e)
                {
                    last = e;
                    Close(candidate);
                    continue;
                }
                listener = candidate;
                Port = ((IPEndPoint)candidate.LocalEndpoint).Port;
                // On the thread pool, whatever context the caller has.
                Task.Run(() => AcceptLoop(candidate));
                return Port;
            }
            throw new InvalidOperationException("no free port from " + preferredPort + " to " + candidates.Last() + ": " + (last != null ? last.Message : ""));
        }

        /// <summary>
        /// Closes a listener's socket now. Mono's TcpListener.Stop() (Unity's
        /// class libraries are mono's) closes the socket and makes a fresh
        /// one for a later Start, and a Start that fails keeps its socket:
        /// each left to the finalizer, two descriptors a reload (measured:
        /// 100 reloads of the headless host left 10 to 16 sockets open).
        /// </summary>
        static void Close(TcpListener listener)
        {
            listener.Stop();
            listener.Server.Close();
        }

        /// <summary>
        /// Accepts until the listener stops. Nothing one client does (a reset
        /// before it is served, a socket option refused) reaches this loop:
        /// each accepted socket is set up inside its own try.
        /// </summary>
        async Task AcceptLoop(TcpListener from)
        {
            while (true)
            {
                TcpClient client;
                try
                {
                    client = await from.AcceptTcpClientAsync().ConfigureAwait(false);
                }
                catch (ObjectDisposedException)
                {
                    return;
                }
                catch (SocketException)
                {
                    if (listener != from)
                    {
                        return;
                    }
                    // Out of descriptors and the like: back off, keep serving.
                    await Task.Delay(50).ConfigureAwait(false);
                    continue;
                }
                catch (InvalidOperationException)
                {
                    return;
                }
                if (listener != from)
                {
                    client.Close();
                    return;
                }
                ClientConnection connection;
                try
                {
                    client.NoDelay = true;
                    connection = new ClientConnection(Interlocked.Increment(ref nextId), client);
                }
                catch (Exception)
                {
                    // Reset or gone before it was served: its loss alone.
                    client.Close();
                    continue;
                }
                lock (gate)
                {
                    clients[connection.Id] = connection;
                }
                _ = Task.Run(() => Serve(connection));
            }
        }

        async Task Serve(ClientConnection connection)
        {
            var decoder = FrameDecoder.Detect(RequestLimit);
            // Small: most requests are a few hundred bytes; the decoder grows
            // for a larger one and the buffer goes with the connection.
            var buffer = new byte[8 * 1024];
            var inFlight = new SemaphoreSlim(InFlightLimit, InFlightLimit);
            try
            {
                while (!connection.Closed.IsCancellationRequested)
                {
                    int read;
                    try
                    {
                        read = await connection.Stream.ReadAsync(buffer, 0, buffer.Length).ConfigureAwait(false);
                    }
                    catch (Exception)
                    {
                        break;
                    }
                    if (read == 0)
                    {
                        break;
                    }
                    decoder.Feed(buffer, 0, read);
                    try
                    {
                        Frame frame;
                        while (decoder.TryDecode(out frame))
                        {
                            connection.Framing = decoder.Framing;
                            if (frame.Kind == FrameKind.TooLarge)
                            {
                                var error = new RpcError(RpcErrorKind.FrameTooLarge, "a frame of " + frame.Size + " bytes is over the limit of " + RequestLimit)
                                    .With("size", frame.Size).With("limit", RequestLimit);
                                await connection.Send(RpcWriter.Error(null, error)).ConfigureAwait(false);
                                continue;
                            }
                            // Backpressure: no more reading while this
                            // client has InFlightLimit answers outstanding.
                            await inFlight.WaitAsync(connection.Closed).ConfigureAwait(false);
                            var body = frame.Body;
                            _ = Task.Run(async () =>
                            {
                                try
                                {
                                    await Handle(connection, body).ConfigureAwait(false);
                                }
                                finally
                                {
                                    inFlight.Release();
                                }
                            });
                        }
                        connection.Framing = decoder.Framing;
                    }
                    catch (OperationCanceledException)
                    {
                        // Closed while waiting for room (a shutdown).
                        break;
                    }
                    catch (FramingException e)
                    {
                        connection.Framing = decoder.Framing;
                        await connection.Send(RpcWriter.Error(null, new RpcError(RpcErrorKind.FramingError, e.Message))).ConfigureAwait(false);
                        break;
                    }
                }
            }
            finally
            {
                connection.Close();
                lock (gate)
                {
                    clients.Remove(connection.Id);
                }
            }
        }

        async Task Handle(ClientConnection connection, byte[] body)
        {
            var context = new ToolContext { Cancellation = connection.Closed, Connection = connection };
            var progress = new ProgressReporter(connection, context);
            context.Progress = progress.Report;
            byte[] answer;
            try
            {
                answer = await dispatcher.Answer(body, context).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                answer = RpcWriter.Error(null, new RpcError(RpcErrorKind.InternalError, e.Message));
            }
            await progress.Finish().ConfigureAwait(false);
            if (answer != null)
            {
                await connection.Send(answer).ConfigureAwait(false);
            }
        }

        /// <summary>Sends a notification to every client.</summary>
        public async Task Broadcast(string method, JObject parameters)
        {
            var body = RpcWriter.Notification(method, parameters);
            foreach (var client in Clients)
            {
                await client.Send(body).ConfigureAwait(false);
            }
        }

        /// <summary>
        /// Tells every client that the tool set changed (§4): after a domain
        /// reload once the tools are registered, and when settings change
        /// which tools are offered.
        /// </summary>
        public Task NotifyToolsChanged()
        {
            return Broadcast("notifications/tools/list_changed", new JObject
            {
                ["timestamp"] = DiscoveryFile.IsoTimestamp(DateTime.UtcNow),
                ["message"] = "Unity tools have been updated",
            });
        }

        /// <summary>
        /// Stops: every client gets notifications/server/shutdown with
        /// <paramref name="reason"/> (DomainReload, EditorQuit), then the
        /// sockets close. Requests in flight get no answer. Called on the
        /// main thread before a reload or a quit, it waits for nothing: to a
        /// client an answer is being written to, the notification goes out
        /// right behind it; a client whose socket cannot take it (it stopped
        /// reading) is closed without it.
        /// </summary>
        public ShutdownReport Shutdown(string reason)
        {
            var stopping = listener;
            listener = null;
            Port = 0;
            if (stopping != null)
            {
                Close(stopping);
            }
            var body = RpcWriter.Notification("notifications/server/shutdown", new JObject { ["reason"] = reason });
            var report = new ShutdownReport();
            foreach (var client in Clients)
            {
                report.Clients++;
                if (client.SendNowAndClose(body))
                {
                    report.Notified++;
                }
            }
            return report;
        }
    }
}

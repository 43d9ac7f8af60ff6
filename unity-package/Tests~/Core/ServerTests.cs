// The listener over real loopback sockets: both framings, pipelining, the
// §2 answers to bad frames, probes, shutdown and the port fallback.

using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Reflection;
using System.Text;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class ServerTests
    {
        EditorServer server;

        [SetUp]
        public void Start()
        {
            server = new EditorServer(new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => new SecuritySettings()), "0.1.0")) { RequestLimit = 1024 };
            server.Start(0);
        }

        [TearDown]
        public void Stop()
        {
            if (server.IsRunning)
            {
                server.Shutdown("EditorQuit");
            }
        }

        /// <summary>A raw client: sends bytes, reads frames with a 5 s timeout.</summary>
        internal sealed class Client : IDisposable
        {
            readonly TcpClient tcp;
            readonly FrameDecoder decoder;

            public Client(int port, Framing framing, int frameLimit = 1 << 20)
            {
                tcp = new TcpClient();
                tcp.Connect(IPAddress.Loopback, port);
                tcp.ReceiveTimeout = 5000;
                decoder = new FrameDecoder(framing, frameLimit);
                Framing = framing;
            }

            public Framing Framing { get; }

            public void SendRaw(string text)
            {
                var bytes = Encoding.UTF8.GetBytes(text);
                tcp.GetStream().Write(bytes, 0, bytes.Length);
            }

            public void Send(string json)
            {
                var frame = FrameEncoder.Encode(Framing, Encoding.UTF8.GetBytes(json));
                tcp.GetStream().Write(frame, 0, frame.Length);
            }

            /// <summary>The next message, or null when the server closed the connection.</summary>
            public JObject Receive()
            {
                var buffer = new byte[65536];
                while (true)
                {
                    Frame frame;
                    if (decoder.TryDecode(out frame))
                    {
                        return JObject.Parse(Encoding.UTF8.GetString(frame.Body));
                    }
                    int read;
                    try
                    {
                        read = tcp.GetStream().Read(buffer, 0, buffer.Length);
                    }
                    catch (System.IO.IOException)
                    {
                        return null;
                    }
                    if (read == 0)
                    {
                        return null;
                    }
                    decoder.Feed(buffer, 0, read);
                }
            }

            /// <summary>
            /// Reads the first bytes of what the server sends (kept for
            /// <see cref="Receive"/>): once they are in, the server's write
            /// has begun, whatever the machine's load.
            /// </summary>
            public void WaitForBytes(int count)
            {
                var buffer = new byte[count];
                var got = 0;
                while (got < count)
                {
                    var read = tcp.GetStream().Read(buffer, got, count - got);
                    if (read == 0)
                    {
                        throw new System.IO.EndOfStreamException("closed after " + got + " bytes");
                    }
                    got += read;
                }
                decoder.Feed(buffer, 0, got);
            }

            public void Dispose() => tcp.Close();
        }

        [TestCase(Framing.Header)]
        [TestCase(Framing.Newline)]
        public void AnswersInTheClientsFraming(Framing framing)
        {
            using (var client = new Client(server.Port, framing))
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":\"b-1\",\"method\":\"ping\",\"params\":{}}");
                var answer = client.Receive();
                Assert.AreEqual("b-1", (string)answer["id"]);
                Assert.AreEqual("Unity MCP Bridge received: ", (string)answer["result"]["Message"]);
            }
        }

        [Test]
        public void PipelinedRequestsAreAnsweredAsTheyFinish()
        {
            using (var client = new Client(server.Port, Framing.Header))
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\",\"params\":{\"TimeoutSeconds\":1}}");
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
                Assert.AreEqual(2, (int)client.Receive()["id"], "the quick one first");
                var slow = client.Receive();
                Assert.AreEqual(1, (int)slow["id"]);
                Assert.AreEqual("timeout", (string)slow["error"]["data"]["type"]);
            }
        }

        [Test]
        public void AFrameOverTheLimitIsAnsweredAndTheConnectionStaysUsable()
        {
            using (var client = new Client(server.Port, Framing.Header))
            {
                client.SendRaw("Content-Length: 5000\r\n\r\n" + new string('x', 5000));
                var error = client.Receive();
                Assert.AreEqual(JTokenType.Null, error["id"].Type);
                Assert.AreEqual(-32600, (int)error["error"]["code"]);
                Assert.AreEqual("frame_too_large", (string)error["error"]["data"]["type"]);
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
                Assert.AreEqual(3, (int)client.Receive()["id"]);
            }
        }

        [Test]
        public void InvalidJsonIsAnsweredAndTheConnectionStaysOpen()
        {
            using (var client = new Client(server.Port, Framing.Newline))
            {
                client.SendRaw("{not json\n");
                var error = client.Receive();
                Assert.AreEqual("parse_error", (string)error["error"]["data"]["type"]);
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
                Assert.AreEqual(4, (int)client.Receive()["id"]);
            }
        }

        [Test]
        public void AFramingErrorIsAnsweredThenTheConnectionCloses()
        {
            using (var client = new Client(server.Port, Framing.Header))
            {
                client.SendRaw("Content-Length: abc\r\n\r\n");
                var error = client.Receive();
                Assert.AreEqual(-32700, (int)error["error"]["code"]);
                Assert.AreEqual("framing_error", (string)error["error"]["data"]["type"]);
                Assert.IsNull(client.Receive(), "closed");
            }
            using (var other = new Client(server.Port, Framing.Header))
            {
                other.Send("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
                Assert.AreEqual(5, (int)other.Receive()["id"], "the listener keeps serving");
            }
        }

        [Test]
        public void ProbesAndVanishingClientsLeaveItServing()
        {
            for (var i = 0; i < 50; i++)
            {
                new Client(server.Port, Framing.Header).Dispose();
            }
            var vanishing = new Client(server.Port, Framing.Header);
            vanishing.SendRaw("Content-Length: 100\r\n\r\n{\"jsonrpc\":");
            vanishing.Dispose();
            using (var client = new Client(server.Port, Framing.Header))
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}");
                Assert.AreEqual(6, (int)client.Receive()["id"]);
            }
        }

        [Test]
        public void ShutdownNotifiesEveryClientThenCloses()
        {
            var first = new Client(server.Port, Framing.Header);
            var second = new Client(server.Port, Framing.Newline);
            // Both connections are served (and their framing known) before the shutdown.
            first.Send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
            second.Send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
            first.Receive();
            second.Receive();
            server.Shutdown("DomainReload");
            foreach (var client in new[] { first, second })
            {
                var notification = client.Receive();
                Assert.AreEqual("notifications/server/shutdown", (string)notification["method"]);
                Assert.AreEqual("DomainReload", (string)notification["params"]["reason"]);
                Assert.IsNull(notification["id"]);
                Assert.IsNull(client.Receive(), "then the connection closes");
                client.Dispose();
            }
            Assert.IsFalse(server.IsRunning);
        }

        /// <summary>
        /// The race CI met: a shutdown while an answer is being written to a
        /// client. The answer goes out whole, the notification right behind
        /// it, then the connection closes; and the shutdown waits for none of
        /// it (the client reads only once it has returned: were it to wait
        /// for the write, it would wait for good).
        /// </summary>
        [Test, Timeout(30000)]
        public void AShutdownDuringAnAnswerNotifiesRightBehindIt()
        {
            var small = new EditorServer(new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => new SecuritySettings()), "0.1.0"));
            small.Start(0);
            using (var client = new Client(small.Port, Framing.Header, 64 << 20))
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"large\",\"params\":{}}");
                // The answer's first bytes are in, the rest unread: the 16 MB
                // answer fills the socket's buffers, and its write waits.
                client.WaitForBytes(1024);
                small.Shutdown("DomainReload");
                var answer = client.Receive();
                Assert.AreEqual(1, (int)answer["id"]);
                Assert.AreEqual(16 << 20, ((string)answer["result"]["Text"]).Length);
                var notification = client.Receive();
                Assert.IsNotNull(notification, "the notification was dropped: the connection closed after the answer");
                Assert.AreEqual("notifications/server/shutdown", (string)notification["method"]);
                Assert.IsNull(client.Receive(), "then the connection closes");
            }
        }

        [Test]
        public void ATakenPortMovesToTheNextOne()
        {
            var holder = new TcpListener(IPAddress.Loopback, 0);
            holder.Start();
            var taken = ((IPEndPoint)holder.LocalEndpoint).Port;
            try
            {
                var other = new EditorServer(new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => new SecuritySettings()), "0.1.0"));
                var port = other.Start(taken);
                Assert.AreNotEqual(taken, port);
                Assert.That(port, Is.InRange(taken + 1, taken + 10));
                other.Shutdown("EditorQuit");
            }
            finally
            {
                holder.Stop();
            }
        }

        [Test]
        public void ProgressComesBeforeTheAnswerAndOnlyIncreases()
        {
            using (var client = new Client(server.Port, Framing.Header))
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":\"p-1\",\"method\":\"counted\"}");
                var progress = new System.Collections.Generic.List<double>();
                while (true)
                {
                    var message = client.Receive();
                    if ((string)message["method"] == "notifications/progress")
                    {
                        Assert.AreEqual("p-1", (string)message["params"]["requestId"]);
                        Assert.AreEqual(3, (double)message["params"]["total"]);
                        progress.Add((double)message["params"]["progress"]);
                        continue;
                    }
                    Assert.AreEqual("p-1", (string)message["id"]);
                    break;
                }
                CollectionAssert.AreEqual(new[] { 1.0, 2.0, 3.0 }, progress);
            }
        }

        [Test]
        public void SetClientNameNamesTheConnection()
        {
            using (var client = new Client(server.Port, Framing.Header))
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"set-client-name\",\"params\":{\"ClientName\":\"claude-code\"}}");
                Assert.AreEqual("claude-code", (string)client.Receive()["result"]["ClientName"]);
                CollectionAssert.Contains(server.Clients.Select(c => c.ClientName).ToList(), "claude-code");
            }
        }

        [Test]
        public void ItListensOnLoopbackOnly()
        {
            var field = typeof(EditorServer).GetField("listener", BindingFlags.NonPublic | BindingFlags.Instance);
            var listener = (TcpListener)field.GetValue(server);
            Assert.AreEqual(IPAddress.Loopback, ((IPEndPoint)listener.LocalEndpoint).Address);
        }
    }
}

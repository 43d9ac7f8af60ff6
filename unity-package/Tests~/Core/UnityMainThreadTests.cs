// The server on Unity's main thread (Tests~/Simulation): started there, as
// [InitializeOnLoad] and delayCall start it, where SynchronizationContext is
// Unity's; a domain reload and a quit driven through beforeAssemblyReload and
// quitting on that thread, with real clients on real sockets.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using NUnit.Framework;
using UnityMcp.Core;
using UnityMcp.Simulation;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class UnityMainThreadTests
    {
        /// <summary>An Editor domain of the simulated Editor: the tests' tools, nothing published.</summary>
        sealed class TestDomain : IEditorDomain
        {
            readonly SimulatedEditor editor;
            public readonly List<string> Errors = new List<string>();
            public readonly List<string> Published = new List<string>();
            int port;

            public TestDomain(SimulatedEditor editor)
            {
                this.editor = editor;
            }

            public string Project => System.IO.Path.GetTempPath().Replace('\\', '/');

            public int PreferredPort => port;

            public void Remember(int port, bool running) => this.port = port;

            public Dispatcher CreateDispatcher(string serverSessionId)
            {
                return new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => new SecuritySettings()), "0.1.0") { ServerSessionId = serverSessionId };
            }

            public void Publish(string state, int port, string serverSessionId)
            {
                lock (Published)
                {
                    Published.Add(state);
                }
            }

            public void DelayCall(Action action) => editor.DelayCall(action);

            public void LogError(string message) => Errors.Add(message);
        }

        SimulatedEditor editor;
        TestDomain domain;
        ServerLifecycle lifecycle;

        [SetUp]
        public void LoadDomain()
        {
            editor = new SimulatedEditor();
            domain = new TestDomain(editor);
            // As McpServerController's static constructor: on the main thread,
            // the handlers registered and the start left to delayCall.
            lifecycle = editor.Invoke(() =>
            {
                var l = new ServerLifecycle(domain);
                editor.BeforeAssemblyReload += () => l.BeforeReload();
                editor.Quitting += () => l.Quit();
                editor.DelayCall(() => l.Start(false));
                return l;
            }).Result;
            var until = DateTime.UtcNow.AddSeconds(10);
            while (lifecycle.Port == 0 && DateTime.UtcNow < until)
            {
                Thread.Sleep(5);
            }
            Assert.AreNotEqual(0, lifecycle.Port, lifecycle.LastError);
        }

        [TearDown]
        public void Unload()
        {
            editor.Invoke(() => { lifecycle.Unload(); return true; }).Wait(5000);
            editor.Dispose();
        }

        /// <summary>Clients that each had a ping answered (so each is being served).</summary>
        List<ServerTests.Client> Served(int count)
        {
            var clients = Enumerable.Range(0, count).Select(_ => new ServerTests.Client(lifecycle.Port, Framing.Header)).ToList();
            foreach (var client in clients)
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"Message\":\"hi\"}}");
                var answer = client.Receive();
                Assert.IsNotNull(answer, "no answer to ping");
                Assert.AreEqual(1, (int)answer["id"]);
            }
            return clients;
        }

        /// <summary>How many of <paramref name="clients"/> were told of the shutdown and then closed.</summary>
        static int ToldAndClosed(List<ServerTests.Client> clients, string reason)
        {
            var told = 0;
            foreach (var client in clients)
            {
                var message = client.Receive();
                // Other notifications may come first (§4: a list_changed of the
                // tools, sent whenever they change, late on a loaded machine).
                for (var others = 0; message != null && message["id"] == null && (string)message["method"] != "notifications/server/shutdown" && others < 8; others++)
                {
                    message = client.Receive();
                }
                if (message != null && (string)message["method"] == "notifications/server/shutdown" && (string)message["params"]["reason"] == reason)
                {
                    told += client.Receive() == null ? 1 : 0;
                }
                else
                {
                    Console.WriteLine("a client was not told of the " + reason + ": it got " + (message == null ? "the close" : message.ToString(Newtonsoft.Json.Formatting.None)));
                }
                client.Dispose();
            }
            return told;
        }

        [Test]
        public void AReloadTellsEveryClientAndLeavesNoWorkForTheMainThread()
        {
            var clients = Served(4);
            var reload = editor.ReloadDomain(() => lifecycle.Unload()).Result;
            var told = ToldAndClosed(clients, "DomainReload");
            Console.WriteLine("reload: the main thread held " + reload.MainThreadBlockedMs + " ms; " + told + " of 4 clients told; " + reload.WorkLost + " continuations lost with the domain");
            // Socket work that waits for the main thread, while the main thread
            // waits for it, is the deadlock: nothing may be left posted.
            Assert.AreEqual(4, told, "clients told of the reload, then closed");
            Assert.AreEqual(0, reload.WorkLost, "the shutdown left work posted to Unity's main thread (its sockets' continuations), lost with the domain");
            Assert.AreEqual(4, lifecycle.LastShutdown.Notified);
        }

        [Test]
        public void AQuitTellsEveryClient()
        {
            var clients = Served(3);
            var blocked = editor.Quit().Result;
            var told = ToldAndClosed(clients, "EditorQuit");
            Console.WriteLine("quit: the main thread held " + blocked + " ms; " + told + " of 3 clients told");
            Assert.AreEqual(3, told);
            Assert.That(domain.Published, Has.Member("stopped"));
        }

        [Test]
        public void ToolsAnswerWhileTheMainThreadIsBusy()
        {
            // Socket work never needs the main thread: ping (no Unity API)
            // is answered while the main thread is held, as a test that
            // waits on it from the main thread would hold it.
            var release = new ManualResetEventSlim();
            var holding = editor.Invoke(() => release.Wait(10000));
            try
            {
                using (var client = new ServerTests.Client(lifecycle.Port, Framing.Header))
                {
                    client.Send("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{}}");
                    var answer = client.Receive();
                    Assert.IsNotNull(answer, "ping waited for the main thread");
                    Assert.AreEqual(5, (int)answer["id"]);
                }
            }
            finally
            {
                release.Set();
                holding.Wait(10000);
            }
        }

        [Test]
        public void ResetConnectionsNeverStopTheListener()
        {
            // Clients that reset at once (SO_LINGER 0, then close), some
            // before the server has even asked who they are.
            for (var i = 0; i < 50; i++)
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                socket.Connect(IPAddress.Loopback, lifecycle.Port);
                socket.LingerState = new LingerOption(true, 0);
                socket.Close();
            }
            Thread.Sleep(200);
            var clients = Served(2);
            foreach (var client in clients)
            {
                client.Dispose();
            }
        }
    }
}

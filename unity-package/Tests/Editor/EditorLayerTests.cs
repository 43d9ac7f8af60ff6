// EditMode tests of the Editor layer, run by Unity's Test Runner inside a
// real Editor (the package is "testable" in fixtures/unity-project): the
// server is up after the domain loads, answers over a real socket, offers
// the whole §6 catalogue, and its backend reads this Editor.

using System;
using System.Collections;
using System.IO;
using System.Linq;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityEngine.TestTools;
using UnityMcp.Core;

namespace UnityMcp.Editor.Tests
{
    public class EditorLayerTests
    {
        static readonly string[] Catalogue =
        {
            "compile", "get-logs", "run-tests", "clear-console", "find-game-objects", "unity-search", "get-hierarchy",
            "get-provider-details", "get-menu-items", "execute-menu-item", "execute-dynamic-code", "focus-window",
            "control-play-mode", "screenshot", "ping", "set-client-name", "get-tool-details", "get-version", "debug-sleep",
        };

        [Test]
        public void TheServerListensAndTheDiscoveryFileSaysWhere()
        {
            McpServerController.Start(false);
            Assert.IsTrue(McpServerController.IsRunning, McpServerController.LastError);
            var discovery = JObject.Parse(File.ReadAllText(DiscoveryFile.PathIn(McpServerController.Project)));
            Assert.AreEqual(McpServerController.Port, (int)discovery["port"]);
            Assert.AreEqual("ready", (string)discovery["state"]);
            Assert.IsTrue(LinkToken.IsWellFormed((string)discovery["token"]), "the discovery file carries this Editor's token");
        }

        /// <summary>
        /// The client runs on a worker thread and the test yields to the
        /// Editor while it waits: a test is run on the main thread, and one
        /// that blocked it waiting for an answer would hold up every tool
        /// that needs the main thread.
        /// </summary>
        [UnityTest]
        public IEnumerator PingIsAnsweredOverASocketInNewlineFraming()
        {
            McpServerController.Start(false);
            var port = McpServerController.Port;
            // Every request carries the token the discovery file publishes.
            var token = (string)JObject.Parse(File.ReadAllText(DiscoveryFile.PathIn(McpServerController.Project)))["token"];
            var exchange = Task.Run(() =>
            {
                using (var client = new TcpClient("127.0.0.1", port))
                {
                    client.ReceiveTimeout = 5000;
                    var stream = client.GetStream();
                    var request = Encoding.UTF8.GetBytes("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"Message\":\"hi\"},\"x-token\":\"" + token + "\"}\n");
                    stream.Write(request, 0, request.Length);
                    return new StreamReader(stream, Encoding.UTF8).ReadLine();
                }
            });
            var until = DateTime.UtcNow.AddSeconds(10);
            while (!exchange.IsCompleted && DateTime.UtcNow < until)
            {
                yield return null;
            }
            Assert.IsTrue(exchange.IsCompleted, "no answer to ping within 10 s");
            var answer = JObject.Parse(exchange.Result);
            Assert.AreEqual(7, (int)answer["id"]);
            Assert.AreEqual("Unity MCP Bridge received: hi", (string)answer["result"]["Message"]);
            Assert.AreEqual(McpServerController.PackageVersion, (string)answer["result"]["Ver"]);
        }

        [Test]
        public void EveryToolOfTheCatalogueIsDiscovered()
        {
            var own = new[] { typeof(Dispatcher).Assembly, typeof(McpServerController).Assembly };
            var registry = ToolRegistry.Discover(AppDomain.CurrentDomain.GetAssemblies(), own);
            foreach (var name in Catalogue)
            {
                Assert.IsNotNull(registry.Find(name), name);
                Assert.IsFalse(registry.IsThirdParty(name), name);
            }
        }

        [Test]
        public void TheBackendReadsThisEditor()
        {
            var backend = new UnityEditorBackend(McpServerController.MainThread);
            Assert.IsNotNull(backend.SceneName);
            Assert.IsNotNull(backend.SceneRoots());
            Assert.IsNotNull(backend.ReadConsole());
            Assert.IsTrue(backend.MenuItems().Any(m => m.Path == "Window/Unity MCP"), "this package's own menu item");
            Assert.AreEqual(McpServerController.Project, backend.ProjectPath);
        }
    }
}

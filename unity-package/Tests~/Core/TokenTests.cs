// The editor link's token (extension token): made once per Editor process,
// published only in the discovery file (0600 on Unix), required as x-token
// in every request after the framing, parse and invalid-request checks and
// before anything runs; AllowClientsWithoutToken lets clients in without it.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;
using UnityMcp.Simulation;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class TokenTests
    {
        const string Unauthorized = "This Editor needs the token from Library/MCPInstance.json in every request (x-token); a client that cannot send one can be let in with Window > Unity MCP > Allow clients without a token.";

        string token;
        SecuritySettings settings;
        Dispatcher dispatcher;

        [SetUp]
        public void MakeDispatcher()
        {
            token = LinkToken.New();
            settings = new SecuritySettings();
            dispatcher = new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => settings), "0.1.0")
            {
                Token = token,
                Journal = new RequestJournal(new MemoryJournalStore()),
                Editor = new EditorInfo { Capabilities = new[] { "resume", "progress" } },
            };
        }

        JObject Answer(string request)
        {
            var answer = dispatcher.Answer(Encoding.UTF8.GetBytes(request), new ToolContext()).Result;
            var parsed = answer == null ? null : JObject.Parse(Encoding.UTF8.GetString(answer));
            OutputSchemaCheck.Check(request, parsed);
            return parsed;
        }

        static void AssertUnauthorized(JObject answer, JToken id)
        {
            Assert.IsNotNull(answer, "an answer");
            Assert.IsNull(answer["result"], "no result: " + answer);
            Assert.AreEqual(-32603, (int)answer["error"]["code"]);
            Assert.AreEqual("Unauthorized", (string)answer["error"]["message"]);
            Assert.AreEqual("unauthorized", (string)answer["error"]["data"]["type"]);
            Assert.AreEqual(Unauthorized, (string)answer["error"]["data"]["message"]);
            Assert.IsTrue(JToken.DeepEquals(id, answer["id"]), "the id echoed: " + answer["id"]);
        }

        // ---- the token itself ----

        [Test]
        public void ATokenIs32RandomBytesInBase64UrlWithoutPadding()
        {
            var made = Enumerable.Range(0, 50).Select(_ => LinkToken.New()).ToList();
            foreach (var t in made)
            {
                Assert.AreEqual(43, t.Length, t);
                StringAssert.IsMatch("^[A-Za-z0-9_-]{43}$", t);
                Assert.IsTrue(LinkToken.IsWellFormed(t));
                var base64 = t.Replace('-', '+').Replace('_', '/') + "=";
                Assert.AreEqual(32, Convert.FromBase64String(base64).Length);
            }
            Assert.AreEqual(made.Count, made.Distinct().Count(), "every token differs");
            Assert.IsFalse(LinkToken.IsWellFormed(""));
            Assert.IsFalse(LinkToken.IsWellFormed(null));
            Assert.IsFalse(LinkToken.IsWellFormed(made[0] + "A"));
            Assert.IsFalse(LinkToken.IsWellFormed(made[0].Substring(1) + "="));
        }

        [Test]
        public void MatchesOnlyTheSameString()
        {
            var other = (token[42] == 'A' ? "B" : "A");
            Assert.IsTrue(LinkToken.Matches(token, new JValue(token)));
            Assert.IsFalse(LinkToken.Matches(token, new JValue(token.Substring(0, 42) + other)), "last character differs");
            Assert.IsFalse(LinkToken.Matches(token, new JValue(token.Substring(0, 42))), "a prefix");
            Assert.IsFalse(LinkToken.Matches(token, new JValue(token + "A")), "longer");
            Assert.IsFalse(LinkToken.Matches(token, new JValue("")));
            Assert.IsFalse(LinkToken.Matches(token, null), "absent");
            Assert.IsFalse(LinkToken.Matches(token, JValue.CreateNull()));
            Assert.IsFalse(LinkToken.Matches(token, new JValue(42)));
            Assert.IsFalse(LinkToken.Matches(token, new JArray(token)));
            Assert.IsFalse(LinkToken.Matches(null, new JValue("")), "no expected token matches nothing");
            Assert.IsFalse(LinkToken.Matches("", new JValue("")));
        }

        [Test]
        public void KeptReusesAStoredTokenAndStoresANewOne()
        {
            string stored = null;
            var saves = 0;
            var first = LinkToken.Kept(() => stored, t => { stored = t; saves++; });
            Assert.AreEqual(first, stored);
            Assert.AreEqual(1, saves);
            Assert.AreEqual(first, LinkToken.Kept(() => stored, t => { stored = t; saves++; }), "the same process: the same token");
            Assert.AreEqual(1, saves);
            stored = "not a token";
            var replaced = LinkToken.Kept(() => stored, t => { stored = t; saves++; });
            Assert.AreNotEqual(first, replaced);
            Assert.IsTrue(LinkToken.IsWellFormed(replaced));
            Assert.AreEqual(2, saves);
        }

        // ---- the check ----

        [Test]
        public void ARequestWithoutTheTokenIsUnauthorizedAndNothingRuns()
        {
            var runs = CountedTool.Runs;
            AssertUnauthorized(Answer("{\"jsonrpc\":\"2.0\",\"id\":\"m-1\",\"method\":\"counted\"}"), new JValue("m-1"));
            Assert.AreEqual(runs, CountedTool.Runs, "the tool did not run");
            JObject journaled;
            Assert.AreEqual(JournalState.Unknown, dispatcher.Journal.StateOf(new JValue("m-1"), "counted", out journaled), "not journaled");
        }

        [TestCase("\"\"")]
        [TestCase("\"not-the-token\"")]
        [TestCase("\"{0}A\"")]
        [TestCase("\"{0} \"")]
        [TestCase("\"{1}\"")]
        public void AWrongTokenIsUnauthorized(string format)
        {
            var other = token.Substring(0, 42) + (token[42] == 'A' ? "B" : "A");
            var given = string.Format(format, token, other);
            var runs = CountedTool.Runs;
            AssertUnauthorized(Answer("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"counted\",\"x-token\":" + given + "}"), new JValue(7));
            Assert.AreEqual(runs, CountedTool.Runs);
            JObject journaled;
            Assert.AreEqual(JournalState.Unknown, dispatcher.Journal.StateOf(new JValue(7), "counted", out journaled));
        }

        [TestCase("null")]
        [TestCase("42")]
        [TestCase("true")]
        [TestCase("[\"{0}\"]")]
        [TestCase("{{\"token\":\"{0}\"}}")]
        public void ATokenThatIsNotAStringIsUnauthorized(string format)
        {
            var runs = CountedTool.Runs;
            AssertUnauthorized(Answer("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"counted\",\"x-token\":" + string.Format(format, token) + "}"), new JValue(8));
            Assert.AreEqual(runs, CountedTool.Runs);
        }

        [Test]
        public void TheRightTokenIsAnswered()
        {
            var runs = CountedTool.Runs;
            var answer = Answer("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"counted\",\"x-token\":\"" + token + "\"}");
            Assert.AreEqual(runs + 1, (int)answer["result"]["Run"], answer.ToString());
            Assert.AreEqual("0.1.0", (string)answer["result"]["Ver"]);
            var ping = Answer("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\",\"params\":{\"Message\":\"hi\"},\"x-token\":\"" + token + "\"}");
            Assert.AreEqual("Unity MCP Bridge received: hi", (string)ping["result"]["Message"]);
        }

        [Test]
        public void AWrongTokenNeverGetsAJournaledAnswerNorTouchesTheJournal()
        {
            var first = Answer("{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"counted\",\"x-token\":\"" + token + "\"}");
            Assert.IsNotNull(first["result"]);
            var runs = CountedTool.Runs;
            AssertUnauthorized(Answer("{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"counted\",\"x-resume\":true,\"x-token\":\"wrong\"}"), new JValue("r-1"));
            AssertUnauthorized(Answer("{\"jsonrpc\":\"2.0\",\"id\":\"r-2\",\"method\":\"counted\",\"x-resume\":true}"), new JValue("r-2"));
            Assert.AreEqual(runs, CountedTool.Runs);
            JObject journaled;
            Assert.AreEqual(JournalState.Unknown, dispatcher.Journal.StateOf(new JValue("r-2"), "counted", out journaled));
            var resumed = Answer("{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"counted\",\"x-resume\":true,\"x-token\":\"" + token + "\"}");
            Assert.AreEqual(first.ToString(), resumed.ToString(), "the journaled answer, to the right token");
        }

        [Test]
        public void TheTokenIsCheckedBeforeXUloopExpectations()
        {
            dispatcher.ProjectRoot = "/projects/mine";
            AssertUnauthorized(Answer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x-uloop\":{\"expectedProjectRoot\":\"/projects/other\"}}"), new JValue(1));
            var mismatch = Answer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x-token\":\"" + token + "\",\"x-uloop\":{\"expectedProjectRoot\":\"/projects/other\"}}");
            Assert.AreEqual("project_mismatch", (string)mismatch["error"]["data"]["type"]);
        }

        [Test]
        public void ClientsWithoutATokenMayBeLetInAndGetVersionSaysWhetherTheTokenIsNeeded()
        {
            var version = Answer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get-version\",\"x-token\":\"" + token + "\"}");
            CollectionAssert.AreEqual(new[] { "resume", "progress", "output-schema", "token" }, version["result"]["Capabilities"].ToObject<string[]>());
            Assert.IsTrue(dispatcher.TokenEnforced);

            // The setting is read at each request: the Editor's window changes it while the server runs.
            settings.AllowClientsWithoutToken = true;
            Assert.IsFalse(dispatcher.TokenEnforced);
            var runs = CountedTool.Runs;
            var answer = Answer("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"counted\"}");
            Assert.AreEqual(runs + 1, (int)answer["result"]["Run"], answer.ToString());
            Assert.IsNotNull(Answer("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"x-token\":\"wrong\"}")["result"], "a wrong token is ignored too");
            version = Answer("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"get-version\"}");
            CollectionAssert.AreEqual(new[] { "resume", "progress", "output-schema" }, version["result"]["Capabilities"].ToObject<string[]>());

            settings.AllowClientsWithoutToken = false;
            AssertUnauthorized(Answer("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}"), new JValue(5));
        }

        [Test]
        public void WithoutATokenSetNothingIsEnforced()
        {
            dispatcher.Token = null;
            Assert.IsFalse(dispatcher.TokenEnforced);
            Assert.IsNotNull(Answer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")["result"]);
            var version = Answer("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"get-version\"}");
            CollectionAssert.DoesNotContain(version["result"]["Capabilities"].ToObject<string[]>(), "token");
        }

        [Test]
        public void ParseErrorsAndInvalidRequestsComeFirst()
        {
            var parse = Answer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":");
            Assert.AreEqual(-32700, (int)parse["error"]["code"]);
            Assert.AreEqual("parse_error", (string)parse["error"]["data"]["type"]);

            var batch = Answer("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
            Assert.AreEqual(-32600, (int)batch["error"]["code"]);
            Assert.AreEqual("invalid_request", (string)batch["error"]["data"]["type"]);

            var noVersion = Answer("{\"id\":2,\"method\":\"ping\"}");
            Assert.AreEqual(-32600, (int)noVersion["error"]["code"]);
            Assert.AreEqual(2, (int)noVersion["id"]);
        }

        [Test]
        public void ANotificationWithoutTheTokenGetsNothingAndRunsNothing()
        {
            var runs = CountedTool.Runs;
            Assert.IsNull(Answer("{\"jsonrpc\":\"2.0\",\"method\":\"counted\"}"));
            Assert.IsNull(Answer("{\"jsonrpc\":\"2.0\",\"method\":\"counted\",\"x-token\":\"wrong\"}"));
            Assert.AreEqual(runs, CountedTool.Runs);
        }

        // ---- the discovery file ----

        [Test]
        public void TheDiscoveryFileCarriesTheTokenReadableByItsUserOnly()
        {
            var project = TempProject();
            try
            {
                var path = DiscoveryFile.PathIn(project);
                DiscoveryFile.Write(project, new DiscoveryInfo { Port = 8701, State = "ready", Token = token });
                Assert.AreEqual(token, (string)FramingTests.ReadJson(path)["token"]);
                Assert.AreEqual("600", Mode(path), "a new file");
                CollectionAssert.AreEqual(new[] { "MCPInstance.json" }, Directory.GetFileSystemEntries(Path.GetDirectoryName(path)).Select(Path.GetFileName).ToArray(), "nothing else left in Library");

                // Rewritten over a file others could read (an older package's).
                File.WriteAllText(path, "{}");
                Chmod(path, "644");
                Assert.AreEqual("644", Mode(path));
                DiscoveryFile.Write(project, new DiscoveryInfo { Port = 8702, State = "reloading", Token = token });
                Assert.AreEqual("600", Mode(path), "rewritten over an existing file");
                Assert.AreEqual(8702, (int)FramingTests.ReadJson(path)["port"]);
                Assert.AreEqual(token, (string)FramingTests.ReadJson(path)["token"]);
                DiscoveryFile.Write(project, new DiscoveryInfo { Port = 8703, State = "ready", Token = token });
                Assert.AreEqual("600", Mode(path), "rewritten over its own file");
                CollectionAssert.AreEqual(new[] { "MCPInstance.json" }, Directory.GetFileSystemEntries(Path.GetDirectoryName(path)).Select(Path.GetFileName).ToArray());

                DiscoveryFile.Write(project, new DiscoveryInfo { Port = 8704, State = "ready" });
                Assert.IsNull(FramingTests.ReadJson(path)["token"], "no token: no member");
            }
            finally
            {
                Directory.Delete(project, true);
            }
        }

        [Test]
        public void AFileThatIsNotOwnerOnlyKeepsTheUsualMode()
        {
            var project = TempProject();
            try
            {
                var path = Path.Combine(project, "UserSettings", "UnityMcpSettings.json");
                Directory.CreateDirectory(Path.GetDirectoryName(path));
                DiscoveryFile.WriteAtomically(path, Encoding.UTF8.GetBytes("{}"));
                var probe = Path.Combine(project, "probe");
                File.WriteAllText(probe, "");
                Assert.AreEqual(Mode(probe), Mode(path), "the mode of any new file (the umask's)");
            }
            finally
            {
                Directory.Delete(project, true);
            }
        }

        static string TempProject()
        {
            var project = Path.Combine(Path.GetTempPath(), "unity-mcp-token-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(project);
            return project;
        }

        /// <summary>The file's permission bits in octal, as stat(1) prints them.</summary>
        internal static string Mode(string path)
        {
            Assert.IsTrue(DiscoveryFile.IsUnix, "these checks read Unix modes");
            return Run("/usr/bin/stat", "-c %a \"" + path + "\"");
        }

        internal static void Chmod(string path, string mode) => Run("/bin/chmod", mode + " \"" + path + "\"");

        static string Run(string program, string arguments)
        {
            var start = new ProcessStartInfo(program, arguments) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
            using (var process = Process.Start(start))
            {
                var output = process.StandardOutput.ReadToEnd();
                process.WaitForExit();
                Assert.AreEqual(0, process.ExitCode, program + " " + arguments + ": " + process.StandardError.ReadToEnd());
                return output.Trim();
            }
        }

        // ---- one token per Editor process, kept across domain reloads ----

        /// <summary>
        /// An Editor process on the simulated main thread: its SessionState
        /// outlives each domain; each domain reads the token from it, as
        /// McpServerController's static constructor does, sets it on the
        /// dispatcher and publishes it in the discovery file.
        /// </summary>
        sealed class TokenEditor : IEditorDomain
        {
            public readonly SimulatedEditor Unity = new SimulatedEditor();
            public readonly Dictionary<string, string> SessionState = new Dictionary<string, string>();
            public readonly string ProjectFolder = TempProject();
            public ServerLifecycle Lifecycle;
            string domainToken;
            int port;

            /// <summary>A domain loads: the token read or made, the server started from delayCall.</summary>
            public void LoadDomain()
            {
                Lifecycle = Unity.Invoke(() =>
                {
                    domainToken = LinkToken.Kept(() => SessionState.ContainsKey("UnityMcp.Token") ? SessionState["UnityMcp.Token"] : "", t => SessionState["UnityMcp.Token"] = t);
                    var l = new ServerLifecycle(this);
                    Unity.BeforeAssemblyReload += () => l.BeforeReload();
                    Unity.Quitting += () => l.Quit();
                    Unity.DelayCall(() => l.Start(false));
                    return l;
                }).Result;
                // Ready once the discovery file says so for this domain's server.
                var until = DateTime.UtcNow.AddSeconds(10);
                while (!Published() && DateTime.UtcNow < until)
                {
                    Thread.Sleep(5);
                }
                Assert.IsTrue(Published(), "the server published ready: " + Lifecycle.LastError);
            }

            bool Published()
            {
                var path = DiscoveryFile.PathIn(ProjectFolder);
                if (!Lifecycle.IsRunning || !File.Exists(path))
                {
                    return false;
                }
                var file = FramingTests.ReadJson(path);
                return (string)file["state"] == "ready" && (string)file["serverSessionId"] == Lifecycle.SessionId;
            }

            public void Reload()
            {
                var current = Lifecycle;
                Unity.ReloadDomain(() => current.Unload()).Wait(10000);
                LoadDomain();
            }

            public string PublishedToken => (string)FramingTests.ReadJson(DiscoveryFile.PathIn(ProjectFolder))["token"];

            public string Project => ProjectFolder;

            public int PreferredPort => port;

            public void Remember(int port, bool running) => this.port = port;

            public Dispatcher CreateDispatcher(string serverSessionId)
            {
                return new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => new SecuritySettings()), "0.1.0") { ServerSessionId = serverSessionId, Token = domainToken };
            }

            public void Publish(string state, int port, string serverSessionId)
            {
                DiscoveryFile.Write(ProjectFolder, new DiscoveryInfo { Port = port, ProjectPath = ProjectFolder, ServerSessionId = serverSessionId, State = state, Token = domainToken });
            }

            public void DelayCall(Action action) => Unity.DelayCall(action);

            public void LogError(string message) => Console.Error.WriteLine(message);

            public void Dispose()
            {
                var current = Lifecycle;
                if (current != null)
                {
                    Unity.Invoke(() => { current.Unload(); return true; }).Wait(5000);
                }
                Unity.Dispose();
                Directory.Delete(ProjectFolder, true);
            }
        }

        static JObject Ping(int port, string token)
        {
            using (var client = new ServerTests.Client(port, Framing.Header))
            {
                client.Send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"Message\":\"hi\"}" + (token != null ? ",\"x-token\":\"" + token + "\"" : "") + "}");
                while (true)
                {
                    var answer = client.Receive();
                    Assert.IsNotNull(answer, "no answer to ping");
                    // Soon after a reload, the tools' list_changed may come first.
                    if (answer["id"] != null)
                    {
                        return answer;
                    }
                }
            }
        }

        [Test]
        public void TheTokenOutlivesADomainReloadAndANewEditorProcessMakesANewOne()
        {
            var editor = new TokenEditor();
            try
            {
                editor.LoadDomain();
                var published = editor.PublishedToken;
                Assert.IsTrue(LinkToken.IsWellFormed(published), published);
                Assert.AreEqual("Unity MCP Bridge received: hi", (string)Ping(editor.Lifecycle.Port, published)["result"]["Message"]);
                AssertUnauthorized(Ping(editor.Lifecycle.Port, null), new JValue(1));
                var session = editor.Lifecycle.SessionId;

                editor.Reload();
                Assert.AreNotEqual(session, editor.Lifecycle.SessionId, "a new domain's server");
                Assert.AreEqual(published, editor.PublishedToken, "the same token after the reload");
                Assert.AreEqual("Unity MCP Bridge received: hi", (string)Ping(editor.Lifecycle.Port, published)["result"]["Message"], "the token read before the reload still works");

                var other = new TokenEditor();
                try
                {
                    other.LoadDomain();
                    Assert.IsTrue(LinkToken.IsWellFormed(other.PublishedToken));
                    Assert.AreNotEqual(published, other.PublishedToken, "another Editor process, another token");
                    AssertUnauthorized(Ping(other.Lifecycle.Port, published), new JValue(1));
                }
                finally
                {
                    other.Dispose();
                }
            }
            finally
            {
                editor.Dispose();
            }
        }

        // ---- the headless host (unity-mcp-host.exe, built next to these tests) ----

        /// <summary>A headless host process serving a temporary project.</summary>
        internal sealed class HostProcess : IDisposable
        {
            readonly Process process;
            public readonly string Project = TempProject();
            public readonly int Port;
            public readonly string Control;

            public HostProcess()
            {
                var exe = new[] { AppDomain.CurrentDomain.BaseDirectory, Environment.CurrentDirectory }
                    .Select(d => Path.Combine(d, "unity-mcp-host.exe")).FirstOrDefault(File.Exists);
                Assert.IsNotNull(exe, "unity-mcp-host.exe is built next to the tests (Tests~/run)");
                var state = Path.Combine(FramingTests.FixturesDir(), "editor-states", "default.json");
                var start = new ProcessStartInfo("mono", "\"" + exe + "\" --project \"" + Project + "\" --state \"" + state + "\"")
                {
                    UseShellExecute = false,
                    RedirectStandardInput = true,
                    RedirectStandardOutput = true,
                    RedirectStandardError = false,
                };
                process = Process.Start(start);
                var line = Task.Run(() => process.StandardOutput.ReadLine());
                Assert.IsTrue(line.Wait(60000), "the host said where it listens within 60 s");
                Assert.IsNotNull(line.Result, "the host exited before listening");
                var ready = JObject.Parse(line.Result);
                Port = (int)ready["port"];
                Control = (string)ready["control"];
            }

            public string PublishedToken => (string)FramingTests.ReadJson(DiscoveryFile.PathIn(Project))["token"];

            /// <summary>The host's process id (its entry in the registry of open Editors is named by it).</summary>
            public int Pid => process.Id;

            public JObject Post(string path, string body)
            {
                var request = (HttpWebRequest)WebRequest.Create(Control + path);
                request.Method = "POST";
                request.ContentType = "application/json";
                request.Timeout = 30000;
                var bytes = Encoding.UTF8.GetBytes(body);
                request.ContentLength = bytes.Length;
                using (var stream = request.GetRequestStream())
                {
                    stream.Write(bytes, 0, bytes.Length);
                }
                using (var response = (HttpWebResponse)request.GetResponse())
                using (var reader = new StreamReader(response.GetResponseStream(), Encoding.UTF8))
                {
                    return JObject.Parse(reader.ReadToEnd());
                }
            }

            public void Dispose()
            {
                try
                {
                    process.StandardInput.Close();
                    if (!process.WaitForExit(10000))
                    {
                        process.Kill();
                    }
                }
                finally
                {
                    process.Dispose();
                    Directory.Delete(Project, true);
                }
            }
        }

        [Test]
        public void TheHeadlessHostPublishesItsTokenKeepsItAcrossReloadsAndLetsClientsInOnlyWhenSet()
        {
            using (var host = new HostProcess())
            {
                var published = host.PublishedToken;
                Assert.IsTrue(LinkToken.IsWellFormed(published), published);
                Assert.AreEqual("600", Mode(DiscoveryFile.PathIn(host.Project)));
                AssertUnauthorized(Ping(host.Port, null), new JValue(1));
                Assert.IsNotNull(Ping(host.Port, published)["result"]);

                var reload = host.Post("/reload", "{\"wait\":true}");
                Assert.AreNotEqual((string)reload["previousSessionId"], (string)reload["sessionId"]);
                Assert.AreEqual(published, host.PublishedToken, "the same token after a simulated domain reload");
                Assert.IsNotNull(Ping((int)reload["port"], published)["result"]);
                AssertUnauthorized(Ping((int)reload["port"], null), new JValue(1));

                var allowed = host.Post("/settings", "{\"allowClientsWithoutToken\":true}");
                Assert.AreEqual(true, (bool)allowed["allowClientsWithoutToken"]);
                Assert.IsNotNull(Ping((int)reload["port"], null)["result"], "let in without a token");
                var denied = host.Post("/settings", "{\"allowClientsWithoutToken\":false}");
                Assert.AreEqual(false, (bool)denied["allowClientsWithoutToken"]);
                AssertUnauthorized(Ping((int)reload["port"], null), new JValue(1));

                using (var other = new HostProcess())
                {
                    Assert.IsTrue(LinkToken.IsWellFormed(other.PublishedToken));
                    Assert.AreNotEqual(published, other.PublishedToken, "another host process, another token");
                }
            }
        }
    }
}

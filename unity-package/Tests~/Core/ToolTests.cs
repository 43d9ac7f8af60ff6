// Tools: schemas generated from parameter classes, binding with
// invalid_params errors, discovery by attribute, the security checker and
// the dispatcher (the §3 error table end to end).

using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    public enum LogKind
    {
        Error = 4,
        Warning = 2,
        Log = 3,
        All = 0,
    }

    public class LogParams
    {
        [Param("Log type to filter")]
        public LogKind LogType = LogKind.All;

        [Param("Maximum number of logs to retrieve")]
        public int MaxCount = 100;

        [Param("Text to search for")]
        public string SearchText = "";

        public bool UseRegex;

        public List<string> Components = new List<string>();

        public double Scale { get; set; } = 1.0;
    }

    [McpTool("sample-logs", Description = "Logs of the console", ReadOnly = true)]
    public class FakeLogsTool : UnityTool<LogParams>
    {
        protected override Task<JObject> Run(LogParams p, ToolContext context)
        {
            return Task.FromResult(new JObject { ["LogType"] = p.LogType.ToString(), ["MaxCount"] = p.MaxCount, ["Count"] = p.Components.Count });
        }
    }

    public class NoParams
    {
    }

    [McpTool("slow", Description = "Waits until cancelled")]
    public class SlowTool : UnityTool<NoParams>
    {
        protected override async Task<JObject> Run(NoParams p, ToolContext context)
        {
            await Task.Delay(Timeout.Infinite, context.Cancellation);
            return new JObject();
        }
    }

    [McpTool("broken", Description = "Throws")]
    public class BrokenTool : UnityTool<NoParams>
    {
        protected override Task<JObject> Run(NoParams p, ToolContext context)
        {
            throw new InvalidOperationException("the scene is not loaded");
        }
    }

    [McpTool("internal-echo", Description = "Internal", DisplayDevelopmentOnly = true)]
    public class InternalEchoTool : UnityTool<NoParams>
    {
        protected override Task<JObject> Run(NoParams p, ToolContext context) => Task.FromResult(new JObject { ["Message"] = "pong" });
    }

    [McpTool("gated-sample", Description = "Declares the menu-item gate, whatever its name", Gate = ToolGate.MenuItemExecution)]
    public class GatedSampleTool : UnityTool<NoParams>
    {
        protected override Task<JObject> Run(NoParams p, ToolContext context)
        {
            return Task.FromResult(new JObject { ["Ran"] = true });
        }
    }

    [McpTool("large", Description = "Answers 16 MB: more than a socket's buffers hold, so its write is in progress until the client reads")]
    public class LargeAnswerTool : UnityTool<NoParams>
    {
        protected override Task<JObject> Run(NoParams p, ToolContext context) => Task.FromResult(new JObject { ["Text"] = new string('x', 16 << 20) });
    }

    [McpTool("counted", Description = "Counts its runs; reports progress")]
    public class CountedTool : UnityTool<NoParams>
    {
        public static int Runs;

        protected override Task<JObject> Run(NoParams p, ToolContext context)
        {
            var run = Interlocked.Increment(ref Runs);
            context.Progress(1, 3, "one");
            context.Progress(2, 3, "two");
            context.Progress(2, 3, "two again");
            context.Progress(3, 3, null);
            return Task.FromResult(new JObject { ["Run"] = run });
        }
    }

    [TestFixture]
    public class ToolTests
    {
        /// <summary>The core's tools and this assembly's.</summary>
        public static ToolRegistry Registry(bool testToolsAreThirdParty = false)
        {
            var core = typeof(Dispatcher).Assembly;
            var tests = typeof(ToolTests).Assembly;
            return ToolRegistry.Discover(new[] { core, tests }, testToolsAreThirdParty ? new[] { core } : new[] { core, tests });
        }

        [Test]
        public void TheSchemaFollowsTheParameterClass()
        {
            var schema = new FakeLogsTool().ParameterSchema;
            var properties = (JObject)schema["Properties"];
            var names = new List<string>();
            foreach (var p in properties.Properties())
            {
                names.Add(p.Name);
            }
            CollectionAssert.AreEqual(new[] { "LogType", "MaxCount", "SearchText", "UseRegex", "Components", "Scale", "TimeoutSeconds" }, names, "declaration order, then the common parameter");
            Assert.AreEqual("string", (string)properties["LogType"]["Type"]);
            Assert.AreEqual("Log type to filter", (string)properties["LogType"]["Description"]);
            Assert.AreEqual("All", (string)properties["LogType"]["DefaultValue"], "an enum default is its name, never its value");
            CollectionAssert.AreEqual(new[] { "Error", "Warning", "Log", "All" }, ((JArray)properties["LogType"]["Enum"]).ToObject<string[]>(), "declaration order, not value order");
            Assert.AreEqual("number", (string)properties["MaxCount"]["Type"]);
            Assert.AreEqual(100, (int)properties["MaxCount"]["DefaultValue"]);
            Assert.AreEqual(JTokenType.Null, properties["MaxCount"]["Enum"].Type);
            Assert.AreEqual("boolean", (string)properties["UseRegex"]["Type"]);
            Assert.AreEqual("array", (string)properties["Components"]["Type"]);
            Assert.AreEqual("number", (string)properties["Scale"]["Type"]);
            Assert.AreEqual("number", (string)properties["TimeoutSeconds"]["Type"]);
            Assert.AreEqual(0, ((JArray)schema["Required"]).Count);
        }

        [Test]
        public void BindingMatchesNamesCaseInsensitivelyAndKeepsDefaults()
        {
            var p = ToolSchema.Bind<LogParams>(JObject.Parse("{\"logtype\":\"warning\",\"MAXCOUNT\":5,\"Unknown\":1,\"SearchText\":null}"));
            Assert.AreEqual(LogKind.Warning, p.LogType);
            Assert.AreEqual(5, p.MaxCount);
            Assert.AreEqual("", p.SearchText);
            Assert.AreEqual(1.0, p.Scale);
        }

        [TestCase("{\"LogType\":\"Nope\"}", "Parameter 'LogType' must be one of Error, Warning, Log, All, not \"Nope\"")]
        [TestCase("{\"LogType\":5}", "Parameter 'LogType' must be one of Error, Warning, Log, All, not 5")]
        [TestCase("{\"MaxCount\":\"ten\"}", "Parameter 'MaxCount' must be a number, not string \"ten\"")]
        [TestCase("{\"MaxCount\":2.5}", "Parameter 'MaxCount' must be a whole number, not 2.5")]
        [TestCase("{\"UseRegex\":\"yes\"}", "Parameter 'UseRegex' must be a boolean, not string \"yes\"")]
        [TestCase("{\"Components\":\"Rigidbody\"}", "Parameter 'Components' must be an array of strings, not string \"Rigidbody\"")]
        [TestCase("{\"SearchText\":{}}", "Parameter 'SearchText' must be a string, not object")]
        public void AWrongValueIsInvalidParamsNamingTheParameter(string parameters, string message)
        {
            var error = Assert.Throws<RpcError>(() => ToolSchema.Bind<LogParams>(JObject.Parse(parameters)));
            Assert.AreEqual(RpcErrorKind.InvalidParams, error.Kind);
            Assert.AreEqual(message, error.Message);
        }

        [Test]
        public void DiscoveryFindsMarkedToolsAndTellsThirdPartyOnes()
        {
            var assembly = typeof(ToolTests).Assembly;
            var own = ToolRegistry.Discover(new[] { assembly }, new[] { assembly });
            Assert.IsNotNull(own.Find("sample-logs"));
            Assert.IsNotNull(own.Find("internal-echo"));
            Assert.IsFalse(own.IsThirdParty("sample-logs"));
            var foreign = ToolRegistry.Discover(new[] { assembly }, new Assembly[0]);
            Assert.IsTrue(foreign.IsThirdParty("sample-logs"));
        }

        static Dispatcher Dispatcher(SecuritySettings settings, bool thirdParty = false)
        {
            return new Dispatcher(Registry(thirdParty), new SecurityChecker(() => settings), "0.1.0");
        }

        static JObject Answer(Dispatcher dispatcher, string request)
        {
            var answer = dispatcher.Answer(Encoding.UTF8.GetBytes(request), new ToolContext()).Result;
            var parsed = answer == null ? null : JObject.Parse(Encoding.UTF8.GetString(answer));
            OutputSchemaCheck.Check(request, parsed);
            return parsed;
        }

        [Test]
        public void InternalToolsAnswerAsSection6Says()
        {
            var dispatcher = Dispatcher(new SecuritySettings { DisabledTools = new List<string> { "run-tests" } });
            dispatcher.Editor = new EditorInfo { UnityVersion = "6000.0.65f1", PackageVersion = "0.1.0", InstanceId = "e-1", Capabilities = new[] { "resume", "progress" } };
            Assert.AreEqual("Unity MCP Bridge received: hi", (string)Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"Message\":\"hi\"}}")["result"]["Message"]);
            var version = Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"get-version\"}")["result"];
            Assert.AreEqual("6000.0.65f1", (string)version["UnityVersion"]);
            Assert.AreEqual(1, (int)version["ProtocolVersion"]);
            Assert.AreEqual("e-1", (string)version["EditorInstanceId"], "the Editor process the resume journal belongs to");
            CollectionAssert.AreEqual(new[] { "resume", "progress", "output-schema" }, version["Capabilities"].ToObject<string[]>(), "the Editor's, then output-schema (every dispatcher's)");

            var details = (JArray)Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"get-tool-details\"}")["result"]["Tools"];
            var names = details.Select(t => (string)t["name"]).ToList();
            CollectionAssert.Contains(names, "sample-logs");
            CollectionAssert.DoesNotContain(names, "ping", "internal tools only when asked");
            CollectionAssert.DoesNotContain(names, "run-tests", "disabled tools are not listed");
            var logs = details.First(t => (string)t["name"] == "sample-logs");
            Assert.AreEqual("All", (string)logs["parameterSchema"]["Properties"]["LogType"]["DefaultValue"]);
            Assert.AreEqual(true, (bool)logs["annotations"]["readOnlyHint"]);
            Assert.AreEqual(false, (bool)logs["displayDevelopmentOnly"]);
            var all = (JArray)Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"get-tool-details\",\"params\":{\"IncludeDevelopmentOnly\":true}}")["result"]["Tools"];
            CollectionAssert.IsSubsetOf(new[] { "ping", "set-client-name", "get-tool-details", "get-version" }, all.Select(t => (string)t["name"]).ToList());
        }

        [Test]
        public void AResumedRequestGetsItsJournaledAnswerOrInterrupted()
        {
            var dispatcher = Dispatcher(new SecuritySettings());
            dispatcher.Journal = new RequestJournal(new MemoryJournalStore());
            var first = Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"counted\"}");
            var runs = CountedTool.Runs;
            var resumed = Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"counted\",\"x-resume\":true}");
            Assert.AreEqual(first.ToString(), resumed.ToString(), "the journaled answer");
            Assert.AreEqual(runs, CountedTool.Runs, "not run again");

            dispatcher.Journal.Started(new JValue("r-2"), "counted");
            var interrupted = Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":\"r-2\",\"method\":\"counted\",\"x-resume\":true}");
            Assert.AreEqual("interrupted", (string)interrupted["error"]["data"]["type"]);
            Assert.AreEqual("DomainReload", (string)interrupted["error"]["data"]["reason"]);
            Assert.AreEqual(runs, CountedTool.Runs);

            var unknown = Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":\"r-3\",\"method\":\"counted\",\"x-resume\":true}");
            Assert.AreEqual(runs + 1, (int)unknown["result"]["Run"], "never seen: it runs");

            dispatcher.Journal = null;
            Answer(dispatcher, "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"counted\",\"x-resume\":true}");
            Assert.AreEqual(runs + 2, CountedTool.Runs, "without a journal (no resume capability) it runs again");
        }

        [Test]
        public void AResultCarriesVerAndTheEchoedId()
        {
            var answer = Answer(Dispatcher(new SecuritySettings()), "{\"jsonrpc\":\"2.0\",\"id\":\"c-1\",\"method\":\"sample-logs\",\"params\":{\"LogType\":\"Error\",\"Components\":[\"a\",\"b\"]}}");
            Assert.AreEqual("c-1", (string)answer["id"]);
            Assert.AreEqual("Error", (string)answer["result"]["LogType"]);
            Assert.AreEqual(2, (int)answer["result"]["Count"]);
            Assert.AreEqual("0.1.0", (string)answer["result"]["Ver"]);
        }

        [Test]
        public void ANotificationRunsNothingAndIsNotAnswered()
        {
            Assert.IsNull(Answer(Dispatcher(new SecuritySettings()), "{\"jsonrpc\":\"2.0\",\"method\":\"sample-logs\"}"));
        }

        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no-such-tool\"}", -32601, "method_not_found")]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sample-logs\",\"params\":{\"LogType\":\"Nope\"}}", -32602, "invalid_params")]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"run-tests\"}", -32603, "security_blocked")]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"broken\"}", -32603, "internal_error")]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\",\"params\":{\"TimeoutSeconds\":0.1}}", -32603, "timeout")]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\",\"params\":{\"TimeoutSeconds\":\"soon\"}}", -32602, "invalid_params")]
        [TestCase("[]", -32600, "invalid_request")]
        [TestCase("{\"jsonrpc\"", -32700, "parse_error")]
        public void FailuresAreAnsweredAsTheErrorTableSays(string request, int code, string type)
        {
            var answer = Answer(Dispatcher(new SecuritySettings()), request);
            Assert.AreEqual(code, (int)answer["error"]["code"], answer.ToString());
            Assert.AreEqual(type, (string)answer["error"]["data"]["type"], answer.ToString());
        }

        [Test]
        public void SecurityBlockedSaysWhichCommandAndWhy()
        {
            var answer = Answer(Dispatcher(new SecuritySettings()), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"run-tests\"}");
            Assert.AreEqual("run-tests", (string)answer["error"]["data"]["command"]);
            StringAssert.Contains("Enable Tests Execution", (string)answer["error"]["data"]["reason"]);
            var allowed = Answer(Dispatcher(new SecuritySettings { EnableTestsExecution = true }), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"run-tests\"}");
            // Past the checker, it reaches the tool (which finds no Editor in this test).
            Assert.AreEqual("internal_error", (string)allowed["error"]["data"]["type"], allowed.ToString());
            StringAssert.Contains("no Editor", (string)allowed["error"]["data"]["message"]);
        }

        [Test]
        public void AToolIsGatedByWhatItDeclaresNotByItsName()
        {
            var request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"gated-sample\"}";
            var blocked = Answer(Dispatcher(new SecuritySettings()), request);
            Assert.AreEqual("security_blocked", (string)blocked["error"]["data"]["type"], blocked.ToString());
            StringAssert.Contains("Allow Menu Item Execution", (string)blocked["error"]["data"]["reason"]);
            var allowed = Answer(Dispatcher(new SecuritySettings { AllowMenuItemExecution = true }), request);
            Assert.AreEqual(true, (bool)allowed["result"]["Ran"], allowed.ToString());
            // The package's gated tools declare their gates.
            Assert.AreEqual(ToolGate.TestsExecution, Registry(false).Find("run-tests").Info.Gate);
            Assert.AreEqual(ToolGate.MenuItemExecution, Registry(false).Find("execute-menu-item").Info.Gate);
            Assert.AreEqual(ToolGate.DynamicCode, Registry(false).Find("execute-dynamic-code").Info.Gate);
            Assert.AreEqual(ToolGate.None, Registry(false).Find("get-logs").Info.Gate);
        }

        [Test]
        public void ADisabledToolIsRefusedButInternalToolsNeverAre()
        {
            var settings = new SecuritySettings { DisabledTools = new List<string> { "sample-logs", "internal-echo" } };
            var answer = Answer(Dispatcher(settings), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sample-logs\"}");
            Assert.AreEqual("tool_disabled", (string)answer["error"]["data"]["type"]);
            Assert.AreEqual("pong", (string)Answer(Dispatcher(settings), "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"internal-echo\"}")["result"]["Message"]);
        }

        [Test]
        public void ThirdPartyToolsAreBlockedUnlessAllowed()
        {
            var request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sample-logs\"}";
            Assert.AreEqual("security_blocked", (string)Answer(Dispatcher(new SecuritySettings(), true), request)["error"]["data"]["type"]);
            Assert.IsNotNull(Answer(Dispatcher(new SecuritySettings { AllowThirdPartyTools = true }, true), request)["result"]);
        }
    }
}

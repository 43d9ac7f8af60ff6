// JSON-RPC as §3 says: ids echoed exactly, notifications told apart, every
// malformed request answered with its kind, the error table.

using System.Text;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class JsonRpcTests
    {
        static byte[] Bytes(string s) => Encoding.UTF8.GetBytes(s);

        static string Text(byte[] b) => Encoding.UTF8.GetString(b);

        [TestCase("7", "7")]
        [TestCase("0", "0")]
        [TestCase("-3", "-3")]
        [TestCase("9007199254740993", "9007199254740993")]
        [TestCase("123456789012345678901234567890", "123456789012345678901234567890")]
        [TestCase("-0", "-0")]
        [TestCase("1e2", "1e2")]
        [TestCase("1.50", "1.50")]
        [TestCase("\"7\"", "\"7\"")]
        [TestCase("\"b-1\"", "\"b-1\"")]
        [TestCase("\"日本\"", "\"日本\"")]
        [TestCase("\"\"", "\"\"")]
        [TestCase("\"2026-01-31T12:34:56Z\"", "\"2026-01-31T12:34:56Z\"")]
        public void IdsAreEchoedWithTheirTypeAndValue(string id, string echoed)
        {
            JToken parsedId;
            var request = RpcRequest.Parse(Bytes("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\",\"params\":{}}"), out parsedId);
            Assert.IsFalse(request.IsNotification);
            var response = Text(RpcWriter.Result(request.Id, new JObject { ["Message"] = "pong" }));
            Assert.AreEqual("{\"jsonrpc\":\"2.0\",\"id\":" + echoed + ",\"result\":{\"Message\":\"pong\"}}", response);
        }

        [TestCase("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}")]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}")]
        public void WithoutAnIdItIsANotification(string body)
        {
            JToken id;
            var request = RpcRequest.Parse(Bytes(body), out id);
            Assert.IsTrue(request.IsNotification);
            Assert.IsNull(id);
        }

        [Test]
        public void AbsentOrNullParamsAreEmpty()
        {
            JToken id;
            Assert.AreEqual(0, RpcRequest.Parse(Bytes("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"), out id).Params.Count);
            Assert.AreEqual(0, RpcRequest.Parse(Bytes("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":null}"), out id).Params.Count);
        }

        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", RpcErrorKind.ParseError, false)]
        [TestCase("not json", RpcErrorKind.ParseError, false)]
        [TestCase("{} {}", RpcErrorKind.ParseError, false)]
        [TestCase("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", RpcErrorKind.InvalidRequest, false)]
        [TestCase("42", RpcErrorKind.InvalidRequest, false)]
        [TestCase("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", RpcErrorKind.InvalidRequest, true)]
        [TestCase("{\"id\":1,\"method\":\"ping\"}", RpcErrorKind.InvalidRequest, true)]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", RpcErrorKind.InvalidRequest, true)]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", RpcErrorKind.InvalidRequest, false)]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", RpcErrorKind.InvalidRequest, false)]
        [TestCase("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", RpcErrorKind.InvalidParams, true)]
        public void MalformedRequestsGetTheirErrorKind(string body, RpcErrorKind kind, bool idKnown)
        {
            JToken id = null;
            var error = Assert.Throws<RpcError>(() => RpcRequest.Parse(Bytes(body), out id));
            Assert.AreEqual(kind, error.Kind);
            Assert.AreEqual(idKnown, id != null, "the id to answer with");
        }

        [Test]
        public void TooDeepIsAParseError()
        {
            var deep = new StringBuilder();
            for (var i = 0; i < 200; i++) deep.Append("[");
            for (var i = 0; i < 200; i++) deep.Append("]");
            JToken id;
            var error = Assert.Throws<RpcError>(() => RpcRequest.Parse(Bytes("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":" + deep + "}}"), out id));
            Assert.AreEqual(RpcErrorKind.ParseError, error.Kind);
        }

        [TestCase(RpcErrorKind.ParseError, -32700, "parse_error")]
        [TestCase(RpcErrorKind.FramingError, -32700, "framing_error")]
        [TestCase(RpcErrorKind.FrameTooLarge, -32600, "frame_too_large")]
        [TestCase(RpcErrorKind.InvalidRequest, -32600, "invalid_request")]
        [TestCase(RpcErrorKind.MethodNotFound, -32601, "method_not_found")]
        [TestCase(RpcErrorKind.InvalidParams, -32602, "invalid_params")]
        [TestCase(RpcErrorKind.SecurityBlocked, -32603, "security_blocked")]
        [TestCase(RpcErrorKind.ToolDisabled, -32603, "tool_disabled")]
        [TestCase(RpcErrorKind.Interrupted, -32603, "interrupted")]
        [TestCase(RpcErrorKind.Timeout, -32603, "timeout")]
        [TestCase(RpcErrorKind.ProjectMismatch, -32603, "project_mismatch")]
        [TestCase(RpcErrorKind.SessionChanged, -32603, "session_changed")]
        [TestCase(RpcErrorKind.InternalError, -32603, "internal_error")]
        public void TheErrorTable(RpcErrorKind kind, int code, string type)
        {
            var body = JObject.Parse(Text(RpcWriter.Error(new JValue("x-1"), new RpcError(kind, "detail"))));
            Assert.AreEqual("2.0", (string)body["jsonrpc"]);
            Assert.AreEqual("x-1", (string)body["id"]);
            Assert.AreEqual(code, (int)body["error"]["code"]);
            Assert.AreEqual(type, (string)body["error"]["data"]["type"]);
            Assert.AreEqual("detail", (string)body["error"]["data"]["message"]);
            Assert.IsNotEmpty((string)body["error"]["message"]);
        }

        [Test]
        public void ErrorsWithoutAnIdAnswerNull()
        {
            var body = Text(RpcWriter.Error(null, new RpcError(RpcErrorKind.ParseError, "bad")));
            StringAssert.StartsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,", body);
        }

        [Test]
        public void SecurityBlockedCarriesCommandAndReason()
        {
            var error = new RpcError(RpcErrorKind.SecurityBlocked, "blocked").With("command", "run-tests").With("reason", "Tests execution is disabled");
            var body = JObject.Parse(Text(RpcWriter.Error(new JValue(1), error)));
            Assert.AreEqual("run-tests", (string)body["error"]["data"]["command"]);
            Assert.AreEqual("Tests execution is disabled", (string)body["error"]["data"]["reason"]);
        }

        [Test]
        public void BodiesHaveNoRawNewline()
        {
            var body = RpcWriter.Result(new JValue(1), new JObject { ["Text"] = "two\nlines", ["Nested"] = new JObject { ["A"] = 1 } });
            CollectionAssert.DoesNotContain(body, (byte)'\n');
            Assert.AreEqual("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"Text\":\"two\\nlines\",\"Nested\":{\"A\":1}}}", Text(body));
        }

        [Test]
        public void NotificationsHaveNoId()
        {
            var body = Text(RpcWriter.Notification("notifications/server/shutdown", new JObject { ["reason"] = "DomainReload" }));
            Assert.AreEqual("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/server/shutdown\",\"params\":{\"reason\":\"DomainReload\"}}", body);
        }
    }
}

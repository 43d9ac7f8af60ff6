// JSON-RPC 2.0 as the editor link uses it (docs/editor-link-protocol.md §3):
// requests parsed strictly enough to answer every mistake with the right
// error, ids echoed with the same JSON type and value, the §3 error table,
// and responses and notifications written as compact JSON.

using System;
using System.Globalization;
using System.IO;
using System.Text;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>The kinds of error of §2 and §3 (their code, data.type and message).</summary>
    public enum RpcErrorKind
    {
        ParseError,
        FramingError,
        FrameTooLarge,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        SecurityBlocked,
        ToolDisabled,
        Interrupted,
        Timeout,
        ProjectMismatch,
        SessionChanged,
        /// <summary>Extension token: the request lacks this Editor's x-token (-32603, unauthorized).</summary>
        Unauthorized,
        InternalError,
    }

    /// <summary>An error answer: code, message and data as §3 defines them.</summary>
    public sealed class RpcError : Exception
    {
        public RpcErrorKind Kind { get; }

        /// <summary>The error's data: type, message and the fields of its kind.</summary>
        public JObject ErrorData { get; }

        public RpcError(RpcErrorKind kind, string detail) : base(detail)
        {
            Kind = kind;
            ErrorData = new JObject { ["type"] = TypeName(kind), ["message"] = detail };
        }

        /// <summary>Adds a field to data (security_blocked's command and reason, interrupted's reason).</summary>
        public RpcError With(string field, JToken value)
        {
            ErrorData[field] = value;
            return this;
        }

        public int Code => CodeOf(Kind);

        public static int CodeOf(RpcErrorKind kind)
        {
            switch (kind)
            {
                case RpcErrorKind.ParseError:
                case RpcErrorKind.FramingError:
                    return -32700;
                case RpcErrorKind.FrameTooLarge:
                case RpcErrorKind.InvalidRequest:
                    return -32600;
                case RpcErrorKind.MethodNotFound:
                    return -32601;
                case RpcErrorKind.InvalidParams:
                    return -32602;
                default:
                    return -32603;
            }
        }

        /// <summary>The data.type string: parse_error, method_not_found …</summary>
        public static string TypeName(RpcErrorKind kind)
        {
            var name = kind.ToString();
            var snake = new StringBuilder();
            for (var i = 0; i < name.Length; i++)
            {
                if (i > 0 && char.IsUpper(name[i]))
                {
                    snake.Append('_');
                }
                snake.Append(char.ToLowerInvariant(name[i]));
            }
            return snake.ToString();
        }

        /// <summary>The top-level message of each kind.</summary>
        public static string DefaultMessage(RpcErrorKind kind)
        {
            switch (kind)
            {
                case RpcErrorKind.ParseError: return "Parse error";
                case RpcErrorKind.FramingError: return "Framing error";
                case RpcErrorKind.FrameTooLarge: return "Frame too large";
                case RpcErrorKind.InvalidRequest: return "Invalid Request";
                case RpcErrorKind.MethodNotFound: return "Method not found";
                case RpcErrorKind.InvalidParams: return "Invalid params";
                case RpcErrorKind.SecurityBlocked: return "Tool blocked by security settings";
                case RpcErrorKind.ToolDisabled: return "Tool disabled";
                case RpcErrorKind.Interrupted: return "Request interrupted";
                case RpcErrorKind.Timeout: return "Request timed out";
                case RpcErrorKind.ProjectMismatch: return "Project mismatch";
                case RpcErrorKind.SessionChanged: return "Session changed";
                case RpcErrorKind.Unauthorized: return "Unauthorized";
                default: return "Internal error";
            }
        }
    }

    /// <summary>A request or notification from a client.</summary>
    public sealed class RpcRequest
    {
        /// <summary>The id exactly as sent (string or number); null for a notification.</summary>
        public JToken Id { get; private set; }

        public string Method { get; private set; }

        /// <summary>The parameters (absent or null: empty).</summary>
        public JObject Params { get; private set; }

        /// <summary>The whole message (for the extensions x-resume, x-token and x-uloop).</summary>
        public JObject Message { get; private set; }

        public bool IsNotification => Id == null;

        /// <summary>The deepest nesting a request may have.</summary>
        public const int MaxDepth = 128;

        /// <summary>
        /// Parses one frame's body. Throws <see cref="RpcError"/> with the
        /// answer's kind; <paramref name="id"/> is then the id to answer with
        /// (null when it cannot be told, or for a notification, which gets
        /// no answer).
        /// </summary>
        public static RpcRequest Parse(byte[] body, out JToken id)
        {
            id = null;
            JToken parsed;
            try
            {
                parsed = ParseJson(body);
            }
            catch (JsonException e)
            {
                throw new RpcError(RpcErrorKind.ParseError, "the body is not valid JSON: " + e.Message);
            }
            if (parsed is JArray)
            {
                throw new RpcError(RpcErrorKind.InvalidRequest, "batches are not supported");
            }
            var message = parsed as JObject;
            if (message == null)
            {
                throw new RpcError(RpcErrorKind.InvalidRequest, "a request must be a JSON object");
            }
            var rawId = message["id"];
            if (rawId != null && rawId.Type != JTokenType.Null)
            {
                if (rawId.Type != JTokenType.String && rawId.Type != JTokenType.Integer && rawId.Type != JTokenType.Float)
                {
                    throw new RpcError(RpcErrorKind.InvalidRequest, "id must be a string or a number");
                }
                id = rawId;
                if (rawId.Type != JTokenType.String)
                {
                    // A number is echoed as it was written: read into a
                    // long or a double, -0 comes back as 0 and 1e2 as 100.0.
                    var text = TopLevelNumber(Encoding.UTF8.GetString(body), "id");
                    if (text != null)
                    {
                        id = new JRaw(text);
                    }
                }
            }
            var version = message["jsonrpc"];
            if (version == null || version.Type != JTokenType.String || (string)version != "2.0")
            {
                throw new RpcError(RpcErrorKind.InvalidRequest, "jsonrpc must be \"2.0\"");
            }
            var method = message["method"];
            if (method == null || method.Type != JTokenType.String)
            {
                throw new RpcError(RpcErrorKind.InvalidRequest, "method must be a string");
            }
            var parameters = message["params"];
            JObject paramObject;
            if (parameters == null || parameters.Type == JTokenType.Null)
            {
                paramObject = new JObject();
            }
            else
            {
                paramObject = parameters as JObject;
                if (paramObject == null)
                {
                    throw new RpcError(RpcErrorKind.InvalidParams, "params must be an object");
                }
            }
            return new RpcRequest { Id = id, Method = (string)method, Params = paramObject, Message = message };
        }

        /// <summary>
        /// The text of the number that is the value of the top-level member
        /// <paramref name="name"/> of the JSON object <paramref name="json"/>,
        /// exactly as written; null when there is none.
        /// </summary>
        public static string TopLevelNumber(string json, string name)
        {
            int depth = 0;
            string lastKey = null;
            bool afterColon = false;
            for (int i = 0; i < json.Length; i++)
            {
                char c = json[i];
                if (c == '"')
                {
                    int start = i + 1;
                    var key = new StringBuilder();
                    for (i = start; i < json.Length && json[i] != '"'; i++)
                    {
                        if (json[i] == '\\')
                        {
                            i++;
                            if (i < json.Length && json[i] != 'u')
                            {
                                key.Append(json[i]);
                            }
                            continue;
                        }
                        key.Append(json[i]);
                    }
                    if (depth == 1 && !afterColon)
                    {
                        lastKey = key.ToString();
                    }
                    afterColon = false;
                }
                else if (c == '{' || c == '[')
                {
                    depth++;
                    afterColon = false;
                }
                else if (c == '}' || c == ']')
                {
                    depth--;
                    afterColon = false;
                }
                else if (c == ':')
                {
                    afterColon = true;
                }
                else if (c == ',')
                {
                    afterColon = false;
                    lastKey = null;
                }
                else if (depth == 1 && afterColon && lastKey == name && (c == '-' || (c >= '0' && c <= '9')))
                {
                    int end = i;
                    while (end < json.Length && "+-0123456789.eE".IndexOf(json[end]) >= 0)
                    {
                        end++;
                    }
                    return json.Substring(i, end - i);
                }
            }
            return null;
        }

        /// <summary>JSON as the editor link reads it: strings stay strings (no dates), bounded depth.</summary>
        public static JToken ParseJson(byte[] body)
        {
            using (var reader = new JsonTextReader(new StreamReader(new MemoryStream(body), new UTF8Encoding(false, true))))
            {
                reader.DateParseHandling = DateParseHandling.None;
                reader.FloatParseHandling = FloatParseHandling.Double;
                reader.MaxDepth = MaxDepth;
                var token = JToken.ReadFrom(reader);
                if (reader.Read())
                {
                    throw new JsonReaderException("more than one JSON value in the body");
                }
                return token;
            }
        }
    }

    /// <summary>Writes responses and notifications as compact JSON bodies.</summary>
    public static class RpcWriter
    {
        static readonly UTF8Encoding Utf8 = new UTF8Encoding(false);

        public static byte[] Result(JToken id, JObject result)
        {
            var message = new JObject { ["jsonrpc"] = "2.0", ["id"] = id == null ? JValue.CreateNull() : id.DeepClone(), ["result"] = result };
            return Compact(message);
        }

        public static byte[] Error(JToken id, RpcError error)
        {
            var message = new JObject
            {
                ["jsonrpc"] = "2.0",
                ["id"] = id == null ? JValue.CreateNull() : id.DeepClone(),
                ["error"] = new JObject
                {
                    ["code"] = error.Code,
                    ["message"] = RpcError.DefaultMessage(error.Kind),
                    ["data"] = error.ErrorData,
                },
            };
            return Compact(message);
        }

        public static byte[] Notification(string method, JObject parameters)
        {
            return Compact(new JObject { ["jsonrpc"] = "2.0", ["method"] = method, ["params"] = parameters });
        }

        /// <summary>Compact JSON, UTF-8, no raw newline (safe for newline framing).</summary>
        public static byte[] Compact(JToken token)
        {
            var text = new StringWriter(CultureInfo.InvariantCulture);
            using (var writer = new JsonTextWriter(text))
            {
                writer.Formatting = Formatting.None;
                writer.DateFormatHandling = DateFormatHandling.IsoDateFormat;
                token.WriteTo(writer);
            }
            return Utf8.GetBytes(text.ToString());
        }
    }
}

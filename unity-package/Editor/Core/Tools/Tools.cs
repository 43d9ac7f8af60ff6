// The tool pattern of the seeds: a tool is a class marked [McpTool], found
// by attribute in every loaded assembly; UnityTool<TParams> gives it typed
// parameters whose schema (get-tool-details, §6) is generated from the
// parameter class: descriptions, defaults, enums as names in declaration
// order. Binding a request's params to the class is where wrong types and
// unknown enum names become invalid_params errors naming the parameter.

using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>Marks a tool class for discovery.</summary>
    [AttributeUsage(AttributeTargets.Class, Inherited = false)]
    public sealed class McpToolAttribute : Attribute
    {
        /// <summary>The tool's name (the JSON-RPC method): kebab-case.</summary>
        public string Name { get; }

        public string Description { get; set; } = "";

        /// <summary>Hidden from MCP tool lists unless asked for (internal tools).</summary>
        public bool DisplayDevelopmentOnly { get; set; }

        public bool ReadOnly { get; set; }

        public bool Destructive { get; set; }

        public bool Idempotent { get; set; }

        /// <summary>The default deadline, in seconds (the default of TimeoutSeconds).</summary>
        public double TimeoutSeconds { get; set; } = 15;

        /// <summary>Where get-tool-details lists the tool (then by name).</summary>
        public int Order { get; set; } = 1000;

        /// <summary>
        /// The security setting that must allow the tool before it runs
        /// (default: none). Declared here, on the tool, so its file shows
        /// that it is gated; <see cref="SecurityChecker"/> enforces it.
        /// </summary>
        public ToolGate Gate { get; set; } = ToolGate.None;

        /// <summary>
        /// The link extension the tool belongs to (its name in get-version's
        /// Capabilities), for a tool only some Editors can offer (a
        /// platform's): listed and callable only where the dispatcher names
        /// the extension; elsewhere absent (method_not_found). Null: always.
        /// </summary>
        public string Extension { get; set; }

        public McpToolAttribute(string name)
        {
            Name = name;
        }
    }

    /// <summary>Describes a parameter (a field or property of a parameter class).</summary>
    [AttributeUsage(AttributeTargets.Field | AttributeTargets.Property)]
    public sealed class ParamAttribute : Attribute
    {
        public string Description { get; }

        /// <summary>The smallest value a number takes (NaN: no bound).</summary>
        public double Min { get; set; } = double.NaN;

        /// <summary>The largest value a number takes (NaN: no bound).</summary>
        public double Max { get; set; } = double.NaN;

        public ParamAttribute(string description)
        {
            Description = description;
        }
    }

    /// <summary>What a running tool can use.</summary>
    public sealed class ToolContext
    {
        /// <summary>Cancelled when the request times out or the connection goes.</summary>
        public CancellationToken Cancellation { get; set; }

        /// <summary>When the call's TimeoutSeconds runs out (UTC).</summary>
        public DateTime Deadline { get; set; } = DateTime.MaxValue;

        /// <summary>Reports progress (notifications/progress) for this request: progress, total, message.</summary>
        public Action<double, double?, string> Progress { get; set; } = delegate { };

        /// <summary>The id of the request being answered.</summary>
        public JToken RequestId { get; set; }

        /// <summary>The calling client's connection (null outside a server).</summary>
        public ClientConnection Connection { get; set; }

        /// <summary>The dispatcher running the call (its tools, settings, Editor).</summary>
        public Dispatcher Dispatcher { get; set; }

        /// <summary>
        /// Journals <c>result</c> as this request's answer now (for x-resume),
        /// when the domain may reload before the tool can return it.
        /// </summary>
        public Action<JObject> JournalAnswer { get; set; } = delegate { };

        /// <summary>
        /// Journals this request as going on after the domain reloads (its
        /// State: what the next domain needs to answer it; the deadline is
        /// the call's), so a resent request waits for the next domain's
        /// answer rather than hearing it was interrupted.
        /// </summary>
        public Action<CarriedCall> CarryAcrossReload { get; set; } = delegate { };

        /// <summary>The Editor the tool works on.</summary>
        public IEditorBackend Editor
        {
            get
            {
                var backend = Dispatcher != null ? Dispatcher.Backend : null;
                if (backend == null)
                {
                    throw new RpcError(RpcErrorKind.InternalError, "this server has no Editor to work on");
                }
                return backend;
            }
        }
    }

    /// <summary>A tool.</summary>
    public interface IUnityTool
    {
        McpToolAttribute Info { get; }

        /// <summary>The parameter schema of get-tool-details.</summary>
        JObject ParameterSchema { get; }

        /// <summary>Runs the tool with a request's params; the result object (without Ver).</summary>
        Task<JObject> Execute(JObject parameters, ToolContext context);
    }

    /// <summary>A tool with typed parameters.</summary>
    public abstract class UnityTool<TParams> : IUnityTool where TParams : new()
    {
        McpToolAttribute info;
        JObject schema;

        public McpToolAttribute Info
        {
            get
            {
                if (info == null)
                {
                    info = GetType().GetCustomAttribute<McpToolAttribute>();
                    if (info == null)
                    {
                        throw new InvalidOperationException(GetType().FullName + " has no [McpTool] attribute");
                    }
                }
                return info;
            }
        }

        public JObject ParameterSchema
        {
            get
            {
                if (schema == null)
                {
                    schema = ToolSchema.Of(typeof(TParams), Info.TimeoutSeconds);
                }
                return schema;
            }
        }

        public Task<JObject> Execute(JObject parameters, ToolContext context)
        {
            return Run(ToolSchema.Bind<TParams>(parameters), context);
        }

        /// <summary>The tool's body.</summary>
        protected abstract Task<JObject> Run(TParams parameters, ToolContext context);
    }

    /// <summary>Parameter schemas and binding.</summary>
    public static class ToolSchema
    {
        /// <summary>The parameter every tool accepts (§6).</summary>
        public const string TimeoutParameter = "TimeoutSeconds";

        /// <summary>The public fields and properties of a parameter class, in declaration order.</summary>
        public static List<MemberInfo> Members(Type type)
        {
            var members = new List<MemberInfo>();
            foreach (var member in type.GetMembers(BindingFlags.Public | BindingFlags.Instance).OrderBy(m => m.MetadataToken))
            {
                var field = member as FieldInfo;
                var property = member as PropertyInfo;
                if ((field != null && !field.IsInitOnly) || (property != null && property.CanRead && property.CanWrite))
                {
                    members.Add(member);
                }
            }
            return members;
        }

        static Type TypeOf(MemberInfo member)
        {
            var field = member as FieldInfo;
            return field != null ? field.FieldType : ((PropertyInfo)member).PropertyType;
        }

        static object Get(MemberInfo member, object target)
        {
            var field = member as FieldInfo;
            return field != null ? field.GetValue(target) : ((PropertyInfo)member).GetValue(target, null);
        }

        static void Set(MemberInfo member, object target, object value)
        {
            var field = member as FieldInfo;
            if (field != null)
            {
                field.SetValue(target, value);
            }
            else
            {
                ((PropertyInfo)member).SetValue(target, value, null);
            }
        }

        /// <summary>The §6 type name of a C# type.</summary>
        public static string TypeName(Type type)
        {
            var underlying = Nullable.GetUnderlyingType(type) ?? type;
            if (underlying == typeof(string) || underlying.IsEnum)
            {
                return "string";
            }
            if (underlying == typeof(bool))
            {
                return "boolean";
            }
            if (underlying == typeof(int) || underlying == typeof(long) || underlying == typeof(float) || underlying == typeof(double)
                || underlying == typeof(short) || underlying == typeof(decimal))
            {
                return "number";
            }
            if (underlying.IsArray || (typeof(IEnumerable).IsAssignableFrom(underlying) && underlying != typeof(JObject)))
            {
                return "array";
            }
            return "object";
        }

        /// <summary>An enum's names in declaration order (not value order).</summary>
        public static string[] EnumNames(Type type)
        {
            return type.GetFields(BindingFlags.Public | BindingFlags.Static).OrderBy(f => f.MetadataToken).Select(f => f.Name).ToArray();
        }

        /// <summary>The parameterSchema of get-tool-details for a parameter class.</summary>
        public static JObject Of(Type parameters, double timeoutSeconds)
        {
            var defaults = Activator.CreateInstance(parameters);
            var properties = new JObject();
            foreach (var member in Members(parameters))
            {
                var type = TypeOf(member);
                var underlying = Nullable.GetUnderlyingType(type) ?? type;
                var param = member.GetCustomAttribute<ParamAttribute>();
                var value = Get(member, defaults);
                properties[member.Name] = new JObject
                {
                    ["Type"] = TypeName(type),
                    ["Description"] = param != null ? param.Description : "",
                    ["DefaultValue"] = value == null ? JValue.CreateNull() : underlying.IsEnum ? new JValue(value.ToString()) : JToken.FromObject(value),
                    ["Enum"] = underlying.IsEnum ? new JArray(EnumNames(underlying).Cast<object>().ToArray()) : (JToken)JValue.CreateNull(),
                };
            }
            if (properties[TimeoutParameter] == null)
            {
                properties[TimeoutParameter] = new JObject
                {
                    ["Type"] = "number",
                    // Names the default, as uLoopMCP's base schema does.
                    ["Description"] = "Timeout for tool execution in seconds (default: " + Number(timeoutSeconds) + " seconds)",
                    ["DefaultValue"] = timeoutSeconds,
                    ["Enum"] = JValue.CreateNull(),
                };
            }
            return new JObject { ["Properties"] = properties, ["Required"] = new JArray() };
        }

        /// <summary>A number as the shortest text that reads back the same (2, 2.5, 0.001).</summary>
        public static string Number(double value) => value.ToString("R", CultureInfo.InvariantCulture);

        static RpcError Invalid(string name, string detail)
        {
            return new RpcError(RpcErrorKind.InvalidParams, "Parameter '" + name + "' " + detail).With("parameter", name);
        }

        /// <summary>A value as an error message names it: string "x", number 5, boolean true, array.</summary>
        static string Describe(JToken value)
        {
            switch (value.Type)
            {
                case JTokenType.String:
                    return "string " + value.ToString(Newtonsoft.Json.Formatting.None);
                case JTokenType.Integer:
                case JTokenType.Float:
                    return "number " + value.ToString(Newtonsoft.Json.Formatting.None);
                case JTokenType.Boolean:
                    return "boolean " + ((bool)value ? "true" : "false");
                case JTokenType.Array:
                    return "array";
                case JTokenType.Object:
                    return "object";
                default:
                    return "null";
            }
        }

        /// <summary>
        /// A parameter object from a request's params: names matched
        /// case-insensitively, absent ones keep their defaults, unknown ones
        /// ignored. A wrong type or an unknown enum name is an invalid_params
        /// error naming the parameter.
        /// </summary>
        public static T Bind<T>(JObject parameters) where T : new()
        {
            var target = new T();
            foreach (var member in Members(typeof(T)))
            {
                JToken value = null;
                foreach (var property in parameters.Properties())
                {
                    if (string.Equals(property.Name, member.Name, StringComparison.OrdinalIgnoreCase))
                    {
                        value = property.Value;
                        break;
                    }
                }
                if (value == null || value.Type == JTokenType.Null)
                {
                    continue;
                }
                Set(member, target, Convert(member.Name, TypeOf(member), value, member.GetCustomAttribute<ParamAttribute>()));
            }
            return target;
        }

        static object Convert(string name, Type type, JToken value, ParamAttribute param)
        {
            var underlying = Nullable.GetUnderlyingType(type) ?? type;
            var typeName = TypeName(underlying);
            if (underlying.IsEnum)
            {
                var names = EnumNames(underlying);
                if (value.Type == JTokenType.String)
                {
                    var text = (string)value;
                    foreach (var n in names)
                    {
                        if (string.Equals(n, text, StringComparison.OrdinalIgnoreCase))
                        {
                            return Enum.Parse(underlying, n);
                        }
                    }
                }
                else if (value.Type == JTokenType.Integer)
                {
                    // uLoopMCP's clients may send the C# value.
                    var number = (long)value;
                    foreach (var n in names)
                    {
                        if (System.Convert.ToInt64(Enum.Parse(underlying, n), CultureInfo.InvariantCulture) == number)
                        {
                            return Enum.Parse(underlying, n);
                        }
                    }
                }
                var shown = value.Type == JTokenType.String || value.Type == JTokenType.Integer || value.Type == JTokenType.Float
                    ? value.ToString(Newtonsoft.Json.Formatting.None) : Describe(value);
                throw Invalid(name, "must be one of " + string.Join(", ", names) + ", not " + shown);
            }
            var ok = (typeName == "string" && value.Type == JTokenType.String)
                || (typeName == "boolean" && value.Type == JTokenType.Boolean)
                || (typeName == "number" && (value.Type == JTokenType.Integer || value.Type == JTokenType.Float))
                || (typeName == "array" && value.Type == JTokenType.Array)
                || (typeName == "object" && value.Type == JTokenType.Object);
            if (!ok)
            {
                var article = typeName == "array" ? "an array of strings" : typeName == "object" ? "an object" : "a " + typeName;
                throw Invalid(name, "must be " + article + ", not " + Describe(value));
            }
            if (typeName == "array" && underlying == typeof(string[]) && value.Any(item => item.Type != JTokenType.String))
            {
                throw Invalid(name, "must be an array of strings");
            }
            if (typeName == "number")
            {
                var number = (double)value;
                var whole = underlying == typeof(int) || underlying == typeof(long) || underlying == typeof(short);
                if (whole && number != Math.Floor(number))
                {
                    throw Invalid(name, "must be a whole number, not " + Number(number));
                }
                if (param != null && ((!double.IsNaN(param.Min) && number < param.Min) || (!double.IsNaN(param.Max) && number > param.Max)))
                {
                    throw Invalid(name, "must be between " + Number(param.Min) + " and " + Number(param.Max) + ", not " + Number(number));
                }
            }
            try
            {
                return value.ToObject(underlying);
            }
            catch (Exception e)
            {
                throw Invalid(name, "cannot be read as " + typeName + ": " + e.Message);
            }
        }
    }

    /// <summary>The tools: found by attribute, looked up by name.</summary>
    public sealed class ToolRegistry
    {
        readonly Dictionary<string, IUnityTool> tools = new Dictionary<string, IUnityTool>(StringComparer.Ordinal);
        readonly Dictionary<string, bool> thirdParty = new Dictionary<string, bool>(StringComparer.Ordinal);

        /// <summary>Adds a tool; <paramref name="isThirdParty"/> marks one from another package.</summary>
        public void Add(IUnityTool tool, bool isThirdParty)
        {
            if (tools.ContainsKey(tool.Info.Name))
            {
                throw new InvalidOperationException("two tools named " + tool.Info.Name);
            }
            tools[tool.Info.Name] = tool;
            thirdParty[tool.Info.Name] = isThirdParty;
        }

        /// <summary>
        /// Every [McpTool] class with a parameterless constructor in
        /// <paramref name="assemblies"/>; those outside <paramref name="own"/>
        /// are third-party tools.
        /// </summary>
        public static ToolRegistry Discover(IEnumerable<Assembly> assemblies, ICollection<Assembly> own)
        {
            var registry = new ToolRegistry();
            foreach (var assembly in assemblies)
            {
                Type[] types;
                try
                {
                    types = assembly.GetTypes();
                }
                catch (ReflectionTypeLoadException e)
                {
                    types = e.Types.Where(t => t != null).ToArray();
                }
                foreach (var type in types.OrderBy(t => t.FullName, StringComparer.Ordinal))
                {
                    if (type.IsAbstract || !typeof(IUnityTool).IsAssignableFrom(type) || type.GetCustomAttribute<McpToolAttribute>() == null
                        || type.GetConstructor(Type.EmptyTypes) == null)
                    {
                        continue;
                    }
                    registry.Add((IUnityTool)Activator.CreateInstance(type), !own.Contains(assembly));
                }
            }
            return registry;
        }

        /// <summary>Takes a tool out (its assembly went away); false when there was none.</summary>
        public bool Remove(string name)
        {
            thirdParty.Remove(name);
            return tools.Remove(name);
        }

        public IUnityTool Find(string name)
        {
            IUnityTool tool;
            return tools.TryGetValue(name, out tool) ? tool : null;
        }

        public bool IsThirdParty(string name)
        {
            bool value;
            return thirdParty.TryGetValue(name, out value) && value;
        }

        /// <summary>Every tool, by <see cref="McpToolAttribute.Order"/>, then name.</summary>
        public IEnumerable<IUnityTool> All => tools.Values.OrderBy(t => t.Info.Order).ThenBy(t => t.Info.Name, StringComparer.Ordinal);
    }
}

// Typed tool results and their output schemas (§6, extension
// output-schema). A tool derived from UnityTool<TParams, TResult> answers a
// TResult, a class of public fields; ToolResults writes it as the result
// object (the dispatcher then adds Ver), and generates the tool's
// outputSchema in get-tool-details from the same class by reflection, by
// the same rules, so the schema cannot drift from what is sent. Nothing of
// a schema is written by hand.
//
// The rules, one place for the writer and the schema:
//
// - Members: the public instance fields, base class first, in declaration
//   order; the JSON name is the field's name. (Properties are refused: a
//   type's field and property order cannot be read back.)
// - string: a string; null is written as "" unless [MayBeNull] (then null).
// - bool: boolean; sbyte … long: integer; float, double, decimal: number.
// - An enum: its name, {"type":"string","enum":[names in declaration order]}.
// - T?: null is written as null: {"type":[T,"null"]}.
// - T[] and List<T>: an array, "items" the element's schema; null is [].
// - A class: a nested object with its own properties and required; null is
//   written as a new instance of it. Where a class holds itself (a tree),
//   the inner level is promised only as {"type":["object","null"]} (no
//   $ref here), and a null there is written as null.
// - JObject: {"type":"object"}, null is {}; JArray: {"type":"array"}, null
//   is []; JToken (any JSON, null included): {} (untyped).
// - [OmitWhenNull]: null is not written at all; [WrittenWhen("Flag")]: the
//   member is written only while the object's non-public bool Flag is
//   true. Neither is ever required.
// - Anything else (object, a dictionary, a property): refused. A tool
//   whose result type is refused (another package's, say) is listed with
//   no outputSchema: nothing is promised. Of the package's own results only
//   these leave content unpromised: find-game-objects' component
//   Properties (JObject: Unity's serialized properties, any shape),
//   get-tool-details' parameterSchema and outputSchema (JObject), and
//   get-hierarchy's children below the first level (a tree).
//
// What a schema promises is only what every answer of the tool holds,
// Success:false answers included (they are the same type), and what a
// bridge keeps of an answer it finds too large: only the top-level
// numbers, booleans and strings of up to 200 characters, plus
// resultSavedToFile and resultSizeBytes. So a top-level member is
// required only when it is always written, never null, and a number, a
// boolean, an enum name or a string marked [ShortText]; a nested member is
// required when it is always written. additionalProperties stays open at
// every level, so Editors may add members.

using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Reflection;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>A result member that is not written at all when it is null (never required).</summary>
    [AttributeUsage(AttributeTargets.Field)]
    public sealed class OmitWhenNullAttribute : Attribute
    {
    }

    /// <summary>A string (or object) member written as JSON null when it is null: {"type":[T,"null"]}.</summary>
    [AttributeUsage(AttributeTargets.Field)]
    public sealed class MayBeNullAttribute : Attribute
    {
    }

    /// <summary>
    /// A string member that is never longer than 200 characters (a
    /// timestamp, a fixed word): kept in a bridge's summary of an oversized
    /// answer, so at the top level it may be required.
    /// </summary>
    [AttributeUsage(AttributeTargets.Field)]
    public sealed class ShortTextAttribute : Attribute
    {
    }

    /// <summary>
    /// A member written only while the object's non-public bool field or
    /// property <see cref="Flag"/> is true (never required); written as any
    /// other when it is.
    /// </summary>
    [AttributeUsage(AttributeTargets.Field)]
    public sealed class WrittenWhenAttribute : Attribute
    {
        public string Flag { get; }

        public WrittenWhenAttribute(string flag)
        {
            Flag = flag;
        }
    }

    /// <summary>A tool whose result has a type (its outputSchema is generated from it).</summary>
    public interface ITypedResultTool
    {
        /// <summary>The result's type; null: none (no outputSchema).</summary>
        Type ResultType { get; }
    }

    /// <summary>A tool with typed parameters and a typed result (the result's schema is its outputSchema).</summary>
    public abstract class UnityTool<TParams, TResult> : UnityTool<TParams>, ITypedResultTool where TParams : new() where TResult : class
    {
        public Type ResultType => typeof(TResult);

        protected sealed override async Task<JObject> Run(TParams parameters, ToolContext context)
        {
            return ToolResults.ToJson(await Answer(parameters, context).ConfigureAwait(false));
        }

        /// <summary>The tool's body: its result (the dispatcher adds Ver).</summary>
        protected abstract Task<TResult> Answer(TParams parameters, ToolContext context);
    }

    /// <summary>Writes typed results and generates their output schemas.</summary>
    public static class ToolResults
    {
        /// <summary>The extension's name in get-version's Capabilities.</summary>
        public const string Capability = "output-schema";

        /// <summary>The member the dispatcher adds to every result (§6).</summary>
        public const string VersionMember = "Ver";

        /// <summary>The longest string a bridge keeps in the summary of an oversized answer.</summary>
        public const int SummaryStringLimit = 200;

        static readonly Dictionary<Type, JObject> Schemas = new Dictionary<Type, JObject>();

        // ---- members ----

        sealed class Member
        {
            public FieldInfo Field;
            public bool OmitWhenNull;
            public bool MayBeNull;
            public bool ShortText;
            public MemberInfo Flag;

            public string Name => Field.Name;

            public Type Type => Field.FieldType;

            /// <summary>Written in every answer (neither omitted when null nor written only sometimes).</summary>
            public bool Always => !OmitWhenNull && Flag == null;

            /// <summary>Written as null when null.</summary>
            public bool Nullable => !OmitWhenNull && (MayBeNull || System.Nullable.GetUnderlyingType(Type) != null || IsAny(Type));
        }

        static readonly Dictionary<Type, List<Member>> MembersOf = new Dictionary<Type, List<Member>>();

        /// <summary>A result type's members, in the order they are written.</summary>
        static List<Member> Members(Type type)
        {
            lock (MembersOf)
            {
                List<Member> known;
                if (MembersOf.TryGetValue(type, out known))
                {
                    return known;
                }
            }
            if (type.GetProperties(BindingFlags.Public | BindingFlags.Instance).Length > 0)
            {
                throw new NotSupportedException("result type " + type.FullName + " has public properties: a result type has public fields only");
            }
            var chain = new List<Type>();
            for (var t = type; t != null && t != typeof(object); t = t.BaseType)
            {
                chain.Insert(0, t);
            }
            var members = new List<Member>();
            foreach (var level in chain)
            {
                foreach (var field in level.GetFields(BindingFlags.Public | BindingFlags.Instance | BindingFlags.DeclaredOnly).OrderBy(f => f.MetadataToken))
                {
                    var member = new Member
                    {
                        Field = field,
                        OmitWhenNull = field.GetCustomAttribute<OmitWhenNullAttribute>() != null,
                        MayBeNull = field.GetCustomAttribute<MayBeNullAttribute>() != null,
                        ShortText = field.GetCustomAttribute<ShortTextAttribute>() != null,
                    };
                    var written = field.GetCustomAttribute<WrittenWhenAttribute>();
                    if (written != null)
                    {
                        var flags = BindingFlags.NonPublic | BindingFlags.Instance;
                        member.Flag = (MemberInfo)type.GetField(written.Flag, flags) ?? type.GetProperty(written.Flag, flags);
                        var flagType = member.Flag is FieldInfo ? ((FieldInfo)member.Flag).FieldType : member.Flag is PropertyInfo ? ((PropertyInfo)member.Flag).PropertyType : null;
                        if (flagType != typeof(bool))
                        {
                            throw new NotSupportedException(type.FullName + "." + field.Name + ": [WrittenWhen] names " + written.Flag + ", which is no non-public bool of the type");
                        }
                    }
                    members.Add(member);
                }
            }
            lock (MembersOf)
            {
                MembersOf[type] = members;
            }
            return members;
        }

        static bool IsAny(Type type) => type == typeof(JToken) || type == typeof(JValue);

        static bool IsInteger(Type t) => t == typeof(int) || t == typeof(long) || t == typeof(short) || t == typeof(sbyte) || t == typeof(byte)
            || t == typeof(ushort) || t == typeof(uint);

        static bool IsNumber(Type t) => t == typeof(double) || t == typeof(float) || t == typeof(decimal);

        /// <summary>The element type of T[] or List&lt;T&gt;; null for anything else.</summary>
        static Type ElementOf(Type type)
        {
            if (type.IsArray)
            {
                return type.GetElementType();
            }
            if (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(List<>))
            {
                return type.GetGenericArguments()[0];
            }
            return null;
        }

        static bool IsObject(Type type) => type.IsClass && type != typeof(string) && !typeof(JToken).IsAssignableFrom(type) && ElementOf(type) == null
            && !typeof(IEnumerable).IsAssignableFrom(type) && type.GetConstructor(Type.EmptyTypes) != null;

        static NotSupportedException Unsupported(Type type) => new NotSupportedException("a result member of type " + type.FullName
            + " (results take strings, booleans, numbers, enums, T?, T[], List<T>, classes of public fields, JObject, JArray, JToken)");

        // ---- writing ----

        /// <summary>A typed result as the tool's result object (without Ver).</summary>
        public static JObject ToJson(object result)
        {
            if (result == null)
            {
                throw new ArgumentNullException(nameof(result));
            }
            return Write(result.GetType(), result, new List<Type>());
        }

        /// <param name="path">The classes being written, outermost first (as the schema's path).</param>
        static JObject Write(Type type, object value, List<Type> path)
        {
            path.Add(type);
            var json = new JObject();
            foreach (var member in Members(type))
            {
                if (member.Flag != null && !FlagOf(member.Flag, value))
                {
                    continue;
                }
                var v = member.Field.GetValue(value);
                if (v == null && member.OmitWhenNull)
                {
                    continue;
                }
                json[member.Name] = Value(member.Type, v, member.MayBeNull, path);
            }
            path.RemoveAt(path.Count - 1);
            return json;
        }

        static bool FlagOf(MemberInfo flag, object target)
        {
            var field = flag as FieldInfo;
            return (bool)(field != null ? field.GetValue(target) : ((PropertyInfo)flag).GetValue(target, null));
        }

        static JToken Value(Type type, object value, bool mayBeNull, List<Type> path)
        {
            var underlying = Nullable.GetUnderlyingType(type) ?? type;
            if (value == null)
            {
                // A tree's inner level (a class within itself) may be null:
                // a new instance would hold another, without end.
                if (mayBeNull || underlying != type || IsAny(type) || path.Contains(type))
                {
                    return JValue.CreateNull();
                }
                return Empty(type, path);
            }
            if (underlying == typeof(string))
            {
                return new JValue((string)value);
            }
            if (underlying.IsEnum)
            {
                return new JValue(value.ToString());
            }
            if (underlying == typeof(bool) || IsInteger(underlying) || IsNumber(underlying))
            {
                // As the JObject indexer writes each type (a float stays a float).
                return new JValue(value);
            }
            if (typeof(JToken).IsAssignableFrom(underlying))
            {
                // A token that already has a parent is copied when it is added.
                return (JToken)value;
            }
            var element = ElementOf(underlying);
            if (element != null)
            {
                var array = new JArray();
                foreach (var item in (IEnumerable)value)
                {
                    array.Add(Value(element, item, false, path));
                }
                return array;
            }
            if (IsObject(underlying))
            {
                return Write(underlying, value, path);
            }
            throw Unsupported(underlying);
        }

        /// <summary>What a null member that may not be null is written as.</summary>
        static JToken Empty(Type type, List<Type> path)
        {
            if (type == typeof(string))
            {
                return new JValue("");
            }
            if (type == typeof(JObject))
            {
                return new JObject();
            }
            if (type == typeof(JArray) || ElementOf(type) != null)
            {
                return new JArray();
            }
            if (IsObject(type))
            {
                return Write(type, Activator.CreateInstance(type), path);
            }
            throw Unsupported(type);
        }

        // ---- schemas ----

        /// <summary>The outputSchema of a result type (with Ver); one shared instance per type: clone it before changing it.</summary>
        public static JObject OutputSchema(Type resultType)
        {
            lock (Schemas)
            {
                JObject known;
                if (Schemas.TryGetValue(resultType, out known))
                {
                    return known;
                }
            }
            if (Members(resultType).Any(m => m.Name == VersionMember))
            {
                throw new NotSupportedException(resultType.FullName + " declares " + VersionMember + ", which the dispatcher adds to every result");
            }
            var schema = ObjectSchema(resultType, new List<Type> { resultType }, true);
            ((JObject)schema["properties"])[VersionMember] = new JObject { ["type"] = "string" };
            var required = schema["required"] as JArray ?? new JArray();
            required.Add(VersionMember);
            schema["required"] = required;
            schema = (JObject)Sorted(schema);
            lock (Schemas)
            {
                Schemas[resultType] = schema;
            }
            return schema;
        }

        /// <summary>
        /// A tool's outputSchema; null when its result has no type (a JObject
        /// built by hand, as another package's tool may answer), or a type
        /// these rules do not cover: then nothing is promised. (The package's
        /// own tools all have one: OutputSchemaTests.)
        /// </summary>
        public static JObject OutputSchemaOf(IUnityTool tool)
        {
            var typed = tool as ITypedResultTool;
            if (typed == null || typed.ResultType == null)
            {
                return null;
            }
            try
            {
                return OutputSchema(typed.ResultType);
            }
            catch (NotSupportedException)
            {
                return null;
            }
        }

        static JObject ObjectSchema(Type type, List<Type> path, bool topLevel)
        {
            var properties = new JObject();
            var required = new JArray();
            foreach (var member in Members(type))
            {
                properties[member.Name] = Schema(member.Type, member.Nullable, path);
                if (member.Always && (!topLevel || Summarised(member)))
                {
                    required.Add(member.Name);
                }
            }
            var schema = new JObject { ["type"] = "object", ["properties"] = properties };
            if (required.Count > 0)
            {
                schema["required"] = required;
            }
            return schema;
        }

        /// <summary>Whether a bridge's summary of an oversized answer keeps the member, whatever its value.</summary>
        static bool Summarised(Member member)
        {
            if (member.Nullable)
            {
                return false;
            }
            var type = member.Type;
            return type == typeof(bool) || IsInteger(type) || IsNumber(type) || type.IsEnum || (type == typeof(string) && member.ShortText);
        }

        static JObject Schema(Type type, bool nullable, List<Type> path)
        {
            var underlying = Nullable.GetUnderlyingType(type) ?? type;
            JObject schema;
            if (IsAny(underlying))
            {
                // Any JSON value: nothing is promised.
                return new JObject();
            }
            if (underlying == typeof(string))
            {
                schema = new JObject { ["type"] = "string" };
            }
            else if (underlying.IsEnum)
            {
                schema = new JObject { ["type"] = "string", ["enum"] = new JArray(ToolSchema.EnumNames(underlying).Cast<object>().ToArray()) };
                if (nullable)
                {
                    ((JArray)schema["enum"]).Add(JValue.CreateNull());
                }
            }
            else if (underlying == typeof(bool))
            {
                schema = new JObject { ["type"] = "boolean" };
            }
            else if (IsInteger(underlying))
            {
                schema = new JObject { ["type"] = "integer" };
            }
            else if (IsNumber(underlying))
            {
                schema = new JObject { ["type"] = "number" };
            }
            else if (underlying == typeof(JObject))
            {
                schema = new JObject { ["type"] = "object" };
            }
            else if (underlying == typeof(JArray))
            {
                schema = new JObject { ["type"] = "array" };
            }
            else if (ElementOf(underlying) != null)
            {
                schema = new JObject { ["type"] = "array", ["items"] = Schema(ElementOf(underlying), false, path) };
            }
            else if (IsObject(underlying))
            {
                if (path.Contains(underlying))
                {
                    // A tree: its inner levels are objects (or null), no more is said.
                    schema = new JObject { ["type"] = "object" };
                    nullable = true;
                }
                else
                {
                    path.Add(underlying);
                    schema = ObjectSchema(underlying, path, false);
                    path.RemoveAt(path.Count - 1);
                }
            }
            else
            {
                throw Unsupported(underlying);
            }
            if (nullable)
            {
                schema["type"] = new JArray(schema["type"], "null");
            }
            return schema;
        }

        /// <summary>Objects' members in ordinal order of their names, at every level (arrays keep their order).</summary>
        public static JToken Sorted(JToken token)
        {
            var obj = token as JObject;
            if (obj != null)
            {
                var sorted = new JObject();
                foreach (var property in obj.Properties().OrderBy(p => p.Name, StringComparer.Ordinal))
                {
                    sorted[property.Name] = Sorted(property.Value);
                }
                return sorted;
            }
            var array = token as JArray;
            if (array != null)
            {
                return new JArray(array.Select(Sorted).Cast<object>().ToArray());
            }
            return token.DeepClone();
        }

        // ---- the catalogue (fixtures/editor-models/package.output-schemas.json) ----

        /// <summary>
        /// Every output schema of <paramref name="tools"/> by tool name, with
        /// get-editor-state's (a method the link answers, no tool), sorted.
        /// Tools without a typed result are left out.
        /// </summary>
        public static JObject Catalogue(IEnumerable<IUnityTool> tools)
        {
            var all = new JObject { [EditorStateSource.Method] = OutputSchema(typeof(EditorStateResult)).DeepClone() };
            foreach (var tool in tools)
            {
                var schema = OutputSchemaOf(tool);
                if (schema != null)
                {
                    all[tool.Info.Name] = schema.DeepClone();
                }
            }
            return (JObject)Sorted(all);
        }

        /// <summary>The catalogue as the fixture file holds it: 2-space indent, "\n" line ends, a final newline.</summary>
        public static string CatalogueText(IEnumerable<IUnityTool> tools)
        {
            var text = new System.IO.StringWriter(CultureInfo.InvariantCulture) { NewLine = "\n" };
            using (var writer = new JsonTextWriter(text) { Formatting = Formatting.Indented, Indentation = 2, IndentChar = ' ' })
            {
                Catalogue(tools).WriteTo(writer);
            }
            return text.ToString().Replace("\r\n", "\n") + "\n";
        }
    }
}

// Output schemas (§6, extension output-schema): each tool's outputSchema is
// generated from its result type, is of the subset ToolResults emits, is
// what fixtures/editor-models/package.output-schemas.json holds, and every
// answer the package gives — the real tools on the headless host's model of
// a project, Success:false answers included, and the answers the other
// tests get (ToolTests, EditorStateTests, TokenTests call Check) —
// validates against it, as does what a bridge keeps of it when it is too
// large. No JSON Schema library runs under mono here: SchemaValidator
// checks the subset (type, properties, required, items, enum) and refuses
// any other keyword.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;
using UnityMcp.Host;

namespace UnityMcp.Core.Tests
{
    /// <summary>A JSON Schema validator for the subset the package emits.</summary>
    public static class SchemaValidator
    {
        static readonly string[] Keywords = { "type", "properties", "required", "items", "enum" };

        static readonly string[] Types = { "object", "array", "string", "integer", "number", "boolean", "null" };

        /// <summary>What is wrong with <paramref name="value"/> against <paramref name="schema"/> (empty: it validates).</summary>
        public static List<string> Errors(JToken schema, JToken value)
        {
            var errors = new List<string>();
            Validate(schema, value, "$", errors);
            return errors;
        }

        static void Validate(JToken schemaToken, JToken value, string at, List<string> errors)
        {
            var schema = schemaToken as JObject;
            if (schema == null)
            {
                errors.Add(at + ": the schema is not an object: " + schemaToken);
                return;
            }
            foreach (var keyword in schema.Properties())
            {
                if (!Keywords.Contains(keyword.Name))
                {
                    errors.Add(at + ": keyword " + keyword.Name + " is outside the subset");
                }
            }
            var type = schema["type"];
            if (type != null)
            {
                var allowed = type.Type == JTokenType.Array ? type.Select(t => (string)t).ToList() : new List<string> { (string)type };
                foreach (var name in allowed.Where(n => !Types.Contains(n)))
                {
                    errors.Add(at + ": unknown type " + name);
                }
                if (!allowed.Any(t => Is(t, value)))
                {
                    errors.Add(at + ": " + Describe(value) + " is not " + string.Join(" or ", allowed.ToArray()));
                    return;
                }
            }
            var values = schema["enum"] as JArray;
            if (schema["enum"] != null && values == null)
            {
                errors.Add(at + ": enum is not an array");
            }
            if (values != null && !values.Any(v => JToken.DeepEquals(v, value)))
            {
                errors.Add(at + ": " + value.ToString(Formatting.None) + " is not one of " + values.ToString(Formatting.None));
            }
            var obj = value as JObject;
            if (obj != null)
            {
                var properties = schema["properties"] as JObject;
                if (properties != null)
                {
                    foreach (var property in properties.Properties())
                    {
                        var member = obj.Property(property.Name);
                        if (member != null)
                        {
                            Validate(property.Value, member.Value, at + "." + property.Name, errors);
                        }
                    }
                }
                var required = schema["required"] as JArray;
                if (required != null)
                {
                    foreach (var name in required.Select(r => (string)r))
                    {
                        if (obj.Property(name) == null)
                        {
                            errors.Add(at + ": required member " + name + " is missing");
                        }
                    }
                }
            }
            var array = value as JArray;
            if (array != null && schema["items"] != null)
            {
                for (var i = 0; i < array.Count; i++)
                {
                    Validate(schema["items"], array[i], at + "[" + i + "]", errors);
                }
            }
        }

        static bool Is(string type, JToken value)
        {
            switch (type)
            {
                case "object":
                    return value.Type == JTokenType.Object;
                case "array":
                    return value.Type == JTokenType.Array;
                case "string":
                    return value.Type == JTokenType.String;
                case "boolean":
                    return value.Type == JTokenType.Boolean;
                case "null":
                    return value.Type == JTokenType.Null;
                case "number":
                    return value.Type == JTokenType.Integer || value.Type == JTokenType.Float;
                case "integer":
                    // 2020-12: a number whose fraction is zero (1.0 too).
                    return value.Type == JTokenType.Integer || (value.Type == JTokenType.Float && Math.Floor((double)value) == (double)value);
                default:
                    return false;
            }
        }

        static string Describe(JToken value)
        {
            var text = value.ToString(Formatting.None);
            return value.Type + " " + (text.Length > 80 ? text.Substring(0, 80) + "…" : text);
        }

        /// <summary>
        /// What a bridge keeps of a result too large for its budget
        /// (bridge/src/results.rs, spill): the top-level numbers, booleans
        /// and strings whose JSON text is at most 202 bytes (200 and the
        /// quotes; escapes and UTF-8 count), plus resultSavedToFile and
        /// resultSizeBytes. Nulls, arrays and objects go.
        /// </summary>
        public static JObject Shrunk(JObject result)
        {
            var kept = new JObject();
            foreach (var member in result.Properties())
            {
                var v = member.Value;
                if (v.Type == JTokenType.Integer || v.Type == JTokenType.Float || v.Type == JTokenType.Boolean
                    || (v.Type == JTokenType.String && Encoding.UTF8.GetByteCount(v.ToString(Formatting.None)) <= ToolResults.SummaryStringLimit + 2))
                {
                    kept[member.Name] = v.DeepClone();
                }
            }
            kept["resultSavedToFile"] = "/project/.uloop/outputs/BridgeResults/tool.json";
            kept["resultSizeBytes"] = 123456;
            return kept;
        }

        /// <summary>Asserts that a result (with Ver) and its shrunk form validate against the schema.</summary>
        public static void AssertValid(string method, JToken schema, JObject result)
        {
            var errors = Errors(schema, result);
            Assert.IsEmpty(errors, method + "'s answer does not validate against its outputSchema: " + string.Join("; ", errors.ToArray()) + "\n" + Cut(result));
            var shrunk = Shrunk(result);
            errors = Errors(schema, shrunk);
            Assert.IsEmpty(errors, method + "'s answer, as a bridge shrinks an oversized one, does not validate: " + string.Join("; ", errors.ToArray()) + "\n" + shrunk);
        }

        static string Cut(JToken value)
        {
            var text = value.ToString(Formatting.None);
            return text.Length > 2000 ? text.Substring(0, 2000) + "…" : text;
        }
    }

    /// <summary>The package's output schemas, for the tests that produce answers.</summary>
    public static class OutputSchemaCheck
    {
        static JObject catalogue;

        /// <summary>Every tool of the package (the core assembly's).</summary>
        public static ToolRegistry PackageTools()
        {
            var core = typeof(Dispatcher).Assembly;
            return ToolRegistry.Discover(new[] { core }, new[] { core });
        }

        /// <summary>The package's schemas by method (get-editor-state's too).</summary>
        public static JObject Catalogue
        {
            get
            {
                if (catalogue == null)
                {
                    catalogue = ToolResults.Catalogue(PackageTools().All);
                }
                return catalogue;
            }
        }

        /// <summary>
        /// Checks a test's answer to one request: a result of a method of the
        /// package validates against its schema. Anything else (an error, a
        /// test's own tool, no answer, a request that is no JSON) passes.
        /// </summary>
        public static void Check(string request, JObject answer)
        {
            if (answer == null || !(answer["result"] is JObject))
            {
                return;
            }
            string method;
            try
            {
                method = (string)JObject.Parse(request)["method"];
            }
            catch (Exception e) when (e is JsonException || e is InvalidCastException || e is ArgumentException)
            {
                return;
            }
            var schema = method != null ? Catalogue[method] : null;
            if (schema != null)
            {
                SchemaValidator.AssertValid(method, schema, (JObject)answer["result"]);
            }
        }
    }

    /// <summary>Every feature of a result type, to pin the rules.</summary>
    public class SampleResult
    {
        public string Text;
        public int Count;
        public long Big;
        public double Ratio;
        public bool Flag;
        public LogTypeFilter Kind;
        public int? Maybe;

        [MayBeNull]
        public string Nullable;

        [OmitWhenNull]
        public string Sometimes;

        [ShortText]
        public string Stamp;

        public List<string> Names;
        public SampleChild Child;
        public List<SampleChild> Children = new List<SampleChild>();
        public JObject Bag;
        public JArray List;
        public JToken Anything;

        [WrittenWhen(nameof(Detailed))]
        public string Detail;

        internal bool Detailed;
    }

    public class SampleChild
    {
        public string Name;

        [OmitWhenNull]
        public int? Extra;

        public SampleChild Next;
    }

    public class ResultWithProperty
    {
        public string Text { get; set; }
    }

    public class ResultWithVer
    {
        public string Ver;
    }

    public class ResultWithDictionary
    {
        public Dictionary<string, string> Map = new Dictionary<string, string>();
    }

    /// <summary>A typed tool whose result type the rules do not cover (as another package's might be): listed, without outputSchema.</summary>
    [McpTool("untypable-result", Description = "A result of a dictionary")]
    public class UntypableResultTool : UnityTool<NoParams, ResultWithDictionary>
    {
        protected override Task<ResultWithDictionary> Answer(NoParams p, ToolContext context) => Task.FromResult(new ResultWithDictionary());
    }

    [TestFixture]
    public class OutputSchemaTests
    {
        const string FixturePath = "editor-models/package.output-schemas.json";

        [Test]
        public void EveryToolOfThePackageHasAnOutputSchemaOfTheSubset()
        {
            var tools = OutputSchemaCheck.PackageTools().All.ToList();
            Assert.GreaterOrEqual(tools.Count, 20, "the package's tools");
            foreach (var tool in tools)
            {
                var schema = ToolResults.OutputSchemaOf(tool);
                Assert.IsNotNull(schema, tool.Info.Name + " has a typed result");
                AssertShape(tool.Info.Name, schema);
            }
            AssertShape(EditorStateSource.Method, OutputSchemaCheck.Catalogue[EditorStateSource.Method]);
        }

        static void AssertShape(string name, JToken schema)
        {
            Assert.AreEqual("object", (string)schema["type"], name);
            var properties = schema["properties"] as JObject;
            Assert.IsNotNull(properties, name + ": properties");
            Assert.AreEqual("string", (string)properties["Ver"]["type"], name + ": Ver, which every result carries");
            var required = ((JArray)schema["required"]).Select(r => (string)r).ToList();
            CollectionAssert.Contains(required, "Ver", name);
            CollectionAssert.AllItemsAreUnique(required, name);
            foreach (var member in required)
            {
                var type = properties[member] != null ? properties[member]["type"] : null;
                Assert.IsNotNull(type, name + ": required " + member + " is a property with a type");
                // A bridge's summary of an oversized answer keeps only these.
                Assert.AreEqual(JTokenType.String, type.Type, name + ": required " + member + " is never null");
                CollectionAssert.Contains(new[] { "string", "integer", "number", "boolean" }, (string)type, name + ": required " + member + " is a scalar");
            }
            AssertSubset(name, schema);
        }

        /// <summary>Only the subset's keywords, nowhere additionalProperties, required within properties.</summary>
        static void AssertSubset(string at, JToken schema)
        {
            var obj = schema as JObject;
            Assert.IsNotNull(obj, at + " is a schema object");
            foreach (var keyword in obj.Properties())
            {
                CollectionAssert.Contains(new[] { "type", "properties", "required", "items", "enum" }, keyword.Name, at + ": keyword " + keyword.Name);
            }
            var properties = obj["properties"] as JObject;
            if (obj["required"] != null)
            {
                Assert.IsNotNull(properties, at + ": required without properties");
                Assert.Greater(((JArray)obj["required"]).Count, 0, at + ": an empty required is left out");
                foreach (var name in obj["required"].Select(r => (string)r))
                {
                    Assert.IsNotNull(properties[name], at + ": required " + name + " is a property");
                }
            }
            if (properties != null)
            {
                Assert.AreEqual("object", (string)obj["type"], at);
                foreach (var property in properties.Properties())
                {
                    AssertSubset(at + "." + property.Name, property.Value);
                }
            }
            if (obj["items"] != null)
            {
                AssertSubset(at + "[]", obj["items"]);
            }
        }

        [Test]
        public void TheFixtureIsWhatThePackageGenerates()
        {
            var path = Path.Combine(FramingTests.FixturesDir(), FixturePath);
            var generated = UnityMcp.Host.Program.PackageOutputSchemas();
            var committed = File.Exists(path) ? File.ReadAllText(path) : "(none)";
            Assert.AreEqual(generated, committed,
                "fixtures/" + FixturePath + " is not what the package generates now (a tool's result type changed?): regenerate it with unity-package/Tests~/output-schemas and commit it");
            Assert.IsTrue(committed.EndsWith("}\n", StringComparison.Ordinal) && !committed.Contains("\r"), "2-space indent, \\n line ends, a final newline");
            var parsed = (JObject)FramingTests.ReadJson(path);
            CollectionAssert.AreEquivalent(OutputSchemaCheck.PackageTools().All.Select(t => t.Info.Name).Concat(new[] { EditorStateSource.Method }).ToList(),
                parsed.Properties().Select(p => p.Name).ToList(), "every tool of the package, and get-editor-state");
        }

        static Dispatcher TestDispatcher(SecuritySettings settings)
        {
            return new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => settings), "0.1.0");
        }

        [Test]
        public void GetToolDetailsGivesEachTypedToolItsOutputSchema()
        {
            var dispatcher = TestDispatcher(new SecuritySettings { EnableTestsExecution = true, AllowMenuItemExecution = true });
            var details = dispatcher.Call("get-tool-details", JObject.Parse("{\"IncludeDevelopmentOnly\":true}"), new ToolContext()).Result;
            SchemaValidator.AssertValid("get-tool-details", OutputSchemaCheck.Catalogue["get-tool-details"], details);
            var listed = 0;
            foreach (JObject entry in (JArray)details["Tools"])
            {
                var name = (string)entry["name"];
                var expected = OutputSchemaCheck.Catalogue[name];
                if (expected == null)
                {
                    Assert.IsNull(entry["outputSchema"], name + ": a tool with an untyped result (a test's) has none");
                    continue;
                }
                listed++;
                Assert.IsTrue(JToken.DeepEquals(expected, entry["outputSchema"]), name + ": " + entry["outputSchema"]);
                var keys = entry.Properties().Select(p => p.Name).ToList();
                Assert.AreEqual(keys.Count - 1, keys.IndexOf("outputSchema"), name + ": outputSchema comes last, after timeoutSeconds");
            }
            Assert.GreaterOrEqual(listed, 19, "the package's tools are listed with their schemas");
            var untypable = ((JArray)details["Tools"]).Single(t => (string)t["name"] == "untypable-result");
            Assert.IsNull(untypable["outputSchema"], "a result type the rules do not cover: listed, nothing promised");
            Assert.AreEqual(15.0, (double)untypable["timeoutSeconds"]);
            var version = dispatcher.Call("get-version", new JObject(), new ToolContext()).Result;
            CollectionAssert.Contains(version["Capabilities"].ToObject<string[]>(), ToolResults.Capability, "get-version names the extension");
        }

        [Test]
        public void TheWriterAndTheSchemaFollowTheSameRules()
        {
            var schema = ToolResults.OutputSchema(typeof(SampleResult));
            Assert.AreEqual(
                "{\"properties\":{"
                + "\"Anything\":{},"
                + "\"Bag\":{\"type\":\"object\"},"
                + "\"Big\":{\"type\":\"integer\"},"
                + "\"Child\":{\"properties\":{\"Extra\":{\"type\":\"integer\"},\"Name\":{\"type\":\"string\"},\"Next\":{\"type\":[\"object\",\"null\"]}},\"required\":[\"Name\",\"Next\"],\"type\":\"object\"},"
                + "\"Children\":{\"items\":{\"properties\":{\"Extra\":{\"type\":\"integer\"},\"Name\":{\"type\":\"string\"},\"Next\":{\"type\":[\"object\",\"null\"]}},\"required\":[\"Name\",\"Next\"],\"type\":\"object\"},\"type\":\"array\"},"
                + "\"Count\":{\"type\":\"integer\"},"
                + "\"Detail\":{\"type\":\"string\"},"
                + "\"Flag\":{\"type\":\"boolean\"},"
                + "\"Kind\":{\"enum\":[\"Error\",\"Warning\",\"Log\",\"All\"],\"type\":\"string\"},"
                + "\"List\":{\"type\":\"array\"},"
                + "\"Maybe\":{\"type\":[\"integer\",\"null\"]},"
                + "\"Names\":{\"items\":{\"type\":\"string\"},\"type\":\"array\"},"
                + "\"Nullable\":{\"type\":[\"string\",\"null\"]},"
                + "\"Ratio\":{\"type\":\"number\"},"
                + "\"Sometimes\":{\"type\":\"string\"},"
                + "\"Stamp\":{\"type\":\"string\"},"
                + "\"Text\":{\"type\":\"string\"},"
                + "\"Ver\":{\"type\":\"string\"}},"
                + "\"required\":[\"Count\",\"Big\",\"Ratio\",\"Flag\",\"Kind\",\"Stamp\",\"Ver\"],"
                + "\"type\":\"object\"}",
                schema.ToString(Formatting.None),
                "a tree's inner level is an object (Next, which may be null); at the top only scalars always written are required");

            // Nulls: the empty value, null where allowed, absent where omitted.
            var empty = ToolResults.ToJson(new SampleResult());
            Assert.AreEqual(
                "{\"Text\":\"\",\"Count\":0,\"Big\":0,\"Ratio\":0.0,\"Flag\":false,\"Kind\":\"Error\",\"Maybe\":null,\"Nullable\":null,\"Stamp\":\"\",\"Names\":[],"
                + "\"Child\":{\"Name\":\"\",\"Next\":null},\"Children\":[],\"Bag\":{},\"List\":[],\"Anything\":null}",
                empty.ToString(Formatting.None), "declaration order; Detail only while Detailed");
            var full = ToolResults.ToJson(new SampleResult
            {
                Text = "t",
                Count = 2,
                Big = 1L << 40,
                Ratio = 0.5f,
                Flag = true,
                Kind = LogTypeFilter.All,
                Maybe = 3,
                Nullable = "n",
                Sometimes = "s",
                Stamp = "2026-01-01T00:00:00.000Z",
                Names = new List<string> { "a", null },
                Child = new SampleChild { Name = "c", Extra = 1, Next = new SampleChild { Name = "d" } },
                Bag = new JObject { ["x"] = 1 },
                List = new JArray(1, "two"),
                Anything = new JValue(7),
                Detail = "d",
                Detailed = true,
            });
            Assert.AreEqual(
                "{\"Text\":\"t\",\"Count\":2,\"Big\":1099511627776,\"Ratio\":0.5,\"Flag\":true,\"Kind\":\"All\",\"Maybe\":3,\"Nullable\":\"n\",\"Sometimes\":\"s\","
                + "\"Stamp\":\"2026-01-01T00:00:00.000Z\",\"Names\":[\"a\",\"\"],\"Child\":{\"Name\":\"c\",\"Extra\":1,\"Next\":{\"Name\":\"d\",\"Next\":null}},"
                + "\"Children\":[],\"Bag\":{\"x\":1},\"List\":[1,\"two\"],\"Anything\":7,\"Detail\":\"d\"}",
                full.ToString(Formatting.None), "enums as names, numbers as the JObject indexer writes them");
            foreach (var result in new[] { empty, full })
            {
                result["Ver"] = "0.1.0";
                SchemaValidator.AssertValid("sample", schema, result);
            }
        }

        [Test]
        public void TypesTheRulesDoNotCoverAreRefused()
        {
            Assert.Throws<NotSupportedException>(() => ToolResults.OutputSchema(typeof(ResultWithProperty)), "properties: their order cannot be read back");
            Assert.Throws<NotSupportedException>(() => ToolResults.OutputSchema(typeof(ResultWithVer)), "Ver is the dispatcher's");
            Assert.Throws<NotSupportedException>(() => ToolResults.OutputSchema(typeof(ResultWithDictionary)), "a dictionary's values are not typed here");
            Assert.Throws<NotSupportedException>(() => ToolResults.ToJson(new ResultWithDictionary()));
        }

        [Test]
        public void TheValidatorRefusesWhatDoesNotMatch()
        {
            var schema = JObject.Parse("{\"type\":\"object\",\"properties\":{\"A\":{\"type\":\"integer\"},\"B\":{\"type\":[\"string\",\"null\"]},"
                + "\"C\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"]}},\"D\":{}},\"required\":[\"A\"]}");
            Assert.IsEmpty(SchemaValidator.Errors(schema, JObject.Parse("{\"A\":1,\"B\":null,\"C\":[\"x\"],\"D\":[1],\"E\":{}}")), "additional members pass");
            Assert.IsEmpty(SchemaValidator.Errors(schema, JObject.Parse("{\"A\":2.0}")), "2.0 is an integer (2020-12)");
            foreach (var bad in new[] { "{}", "{\"A\":1.5}", "{\"A\":\"1\"}", "{\"A\":1,\"B\":2}", "{\"A\":1,\"C\":[\"z\"]}", "{\"A\":1,\"C\":\"x\"}", "[]" })
            {
                Assert.IsNotEmpty(SchemaValidator.Errors(schema, JToken.Parse(bad)), bad);
            }
            Assert.IsNotEmpty(SchemaValidator.Errors(JObject.Parse("{\"type\":\"object\",\"additionalProperties\":false}"), new JObject()), "a keyword outside the subset");
            var shrunk = SchemaValidator.Shrunk(JObject.Parse("{\"N\":1,\"S\":\"" + new string('s', 201) + "\",\"T\":\"" + new string('t', 200) + "\",\"Q\":\"" + new string('\u00e9', 101)
                + "\",\"Z\":null,\"L\":[1],\"O\":{},\"B\":false,\"F\":-1.5}"));
            CollectionAssert.AreEqual(new[] { "N", "T", "B", "F", "resultSavedToFile", "resultSizeBytes" }, shrunk.Properties().Select(p => p.Name).ToArray(), "as bridge/src/results.rs keeps them");
        }

        // ---- the package's answers ----

        sealed class Model
        {
            public string Project;
            public ModelEditor Editor;
            public Dispatcher Dispatcher;
            public readonly HashSet<string> Answered = new HashSet<string>();
        }

        static Model OnModel(string state)
        {
            var project = Path.Combine(Path.GetTempPath(), "output-schemas-" + Guid.NewGuid().ToString("N"));
            Copy(Path.Combine(FramingTests.FixturesDir(), "unity-project"), project);
            var editor = new ModelEditor(ModelEditor.LoadState(Path.Combine(Path.Combine(FramingTests.FixturesDir(), "editor-states"), state)), project);
            var settings = editor.InitialSettings();
            settings.EnableTestsExecution = true;
            settings.AllowMenuItemExecution = true;
            settings.DynamicCodeSecurityLevel = DynamicCodeSecurityLevel.Restricted;
            var dispatcher = new Dispatcher(OutputSchemaCheck.PackageTools(), new SecurityChecker(() => settings), "0.1.0")
            {
                Backend = editor,
                Editor = editor.EditorInfo(true),
            };
            return new Model { Project = project, Editor = editor, Dispatcher = dispatcher };
        }

        static void Copy(string from, string to)
        {
            Directory.CreateDirectory(to);
            foreach (var file in Directory.GetFiles(from))
            {
                File.Copy(file, Path.Combine(to, Path.GetFileName(file)));
            }
            foreach (var dir in Directory.GetDirectories(from))
            {
                Copy(dir, Path.Combine(to, Path.GetFileName(dir)));
            }
        }

        /// <summary>Calls a tool on the model; its answer (the journaled one, when a reload withholds it) validated.</summary>
        static JObject Call(Model model, string method, string parameters = "{}")
        {
            JObject result;
            try
            {
                result = model.Dispatcher.Call(method, JObject.Parse(parameters), new ToolContext()).GetAwaiter().GetResult();
            }
            catch (AnswerWithheld withheld)
            {
                result = (JObject)withheld.Result.DeepClone();
                result["Ver"] = "0.1.0";
            }
            var schema = OutputSchemaCheck.Catalogue[method];
            Assert.IsNotNull(schema, method);
            SchemaValidator.AssertValid(method + " " + parameters, schema, result);
            model.Answered.Add(method);
            return result;
        }

        static readonly string LongText = new string('x', 300);

        [Test]
        public void EveryAnswerOfThePackageValidatesAgainstItsSchema()
        {
            var model = OnModel("default.json");
            try
            {
                Call(model, "ping", "{\"Message\":\"hi\"}");
                Call(model, "ping", "{\"Message\":\"" + LongText + "\"}");
                Call(model, "set-client-name", "{\"ClientName\":\"" + LongText + "\"}");
                Call(model, "get-version");
                Call(model, "get-tool-details");
                Call(model, "get-tool-details", "{\"IncludeDevelopmentOnly\":true}");
                var slept = Call(model, "debug-sleep", "{\"SleepSeconds\":0.01}");
                Assert.AreEqual(JTokenType.Float, slept["ActualSleepSeconds"].Type);
                Call(model, "get-logs");
                Call(model, "get-logs", "{\"IncludeStackTrace\":false,\"LogType\":\"Warning\",\"MaxCount\":1}");
                Call(model, "get-logs", "{\"SearchText\":\"" + LongText + "\"}");
                Call(model, "find-game-objects");
                Call(model, "find-game-objects", "{\"NamePattern\":\"a\",\"SearchMode\":\"Contains\",\"IncludeInheritedProperties\":true,\"IncludeInactive\":true}");
                Call(model, "find-game-objects", "{\"RequiredComponents\":[\"Transform\"],\"MaxResults\":1}");
                Call(model, "get-hierarchy");
                Call(model, "get-hierarchy", "{\"RootPath\":\"Nope\"}");
                var saved = Call(model, "get-hierarchy", "{\"MaxResponseSizeKB\":0}");
                Assert.AreEqual(true, (bool)saved["hierarchySavedToFile"], "the saved-to-file answer");
                Call(model, "get-hierarchy", "{\"IncludeComponents\":false,\"MaxDepth\":0,\"IncludeInactive\":false}");
                Call(model, "unity-search", "{\"SearchQuery\":\"t:Texture2D\"}");
                var metadata = Call(model, "unity-search", "{\"SearchQuery\":\"a\",\"IncludeMetadata\":true,\"IncludeDescription\":false}");
                Assert.IsNotNull(metadata["Results"][0]["FileSize"], "metadata asked for");
                Call(model, "unity-search", "{\"SearchQuery\":\"\"}");
                Call(model, "unity-search", "{\"SearchQuery\":\"x\",\"Providers\":[\"nope\"]}");
                Call(model, "unity-search", "{\"SearchQuery\":\"a\",\"SaveToFile\":true,\"OutputFormat\":\"CSV\"}");
                Call(model, "unity-search", "{\"SearchQuery\":\"a\",\"AutoSaveThreshold\":1}");
                Call(model, "unity-search", "{\"SearchQuery\":\"p:\",\"FileExtensions\":[\"cs\"],\"AssetTypes\":[\"MonoScript\"],\"PathFilter\":\"Scripts\"}");
                Call(model, "get-provider-details");
                Call(model, "get-provider-details", "{\"ProviderId\":\"nope\",\"IncludeDescriptions\":false,\"SortByPriority\":false}");
                Call(model, "get-provider-details", "{\"ActiveOnly\":true}");
                Call(model, "get-menu-items");
                Call(model, "get-menu-items", "{\"FilterText\":\"tools\",\"FilterType\":\"startswith\",\"IncludeValidation\":true}");
                Call(model, "execute-menu-item", "{\"MenuItemPath\":\"Tools/Fixture/Log Hello\"}");
                Call(model, "execute-menu-item", "{\"MenuItemPath\":\"No/Such\"}");
                Call(model, "execute-menu-item", "{\"MenuItemPath\":\"GameObject/Create Empty\"}");
                Call(model, "focus-window");
                Call(model, "screenshot", "{\"WindowName\":\"Scene\",\"ResolutionScale\":0.1,\"IncludeImageData\":true}");
                Call(model, "screenshot", "{\"WindowName\":\"Game\",\"ResolutionScale\":0.1}");
                Call(model, "screenshot", "{\"WindowName\":\"Nope\"}");
                Call(model, "control-play-mode", "{\"Action\":\"Play\"}");
                Call(model, "get-hierarchy");
                Call(model, "control-play-mode", "{\"Action\":\"Pause\"}");
                Call(model, "control-play-mode", "{\"Action\":\"Stop\"}");
                Call(model, "run-tests");
                Call(model, "run-tests", "{\"FilterType\":\"regex\",\"FilterValue\":\"Nothing.Matches.This\"}");
                Call(model, "run-tests", "{\"TestMode\":\"PlayMode\",\"SaveXml\":true}");
                Call(model, "execute-dynamic-code", "{\"Code\":\"return 1 + 2;\"}");
                Call(model, "execute-dynamic-code", "{\"Code\":\"return x;\"}");
                Call(model, "execute-dynamic-code", "{\"Code\":\"Debug.Log(\\\"a\\\"); return null;\"}");
                Call(model, "execute-dynamic-code", "{\"Code\":\"return System.IO.File.Exists(\\\"x\\\");\"}");
                Call(model, "execute-dynamic-code", "{\"Code\":\"return 1;\",\"CompileOnly\":true}");
                Call(model, "clear-console", "{\"AddConfirmationMessage\":false}");
                Call(model, "clear-console");
                Call(model, "compile");
                // A compile of changed scripts: the domain reloads, the answer is journaled.
                File.WriteAllText(Path.Combine(Path.Combine(model.Project, "Assets"), "Added.cs"), "public class Added {}\n");
                Call(model, "compile", "{\"ForceRecompile\":true}");
            }
            finally
            {
                Directory.Delete(model.Project, true);
            }
            var errors = OnModel("compile-errors.json");
            try
            {
                var failed = Call(errors, "compile");
                Assert.AreEqual(false, (bool)failed["Success"]);
                Call(errors, "get-logs");
            }
            finally
            {
                Directory.Delete(errors.Project, true);
            }
            var untested = OutputSchemaCheck.PackageTools().All.Select(t => t.Info.Name).Where(n => !model.Answered.Contains(n)).ToList();
            CollectionAssert.AreEquivalent(new[] { ModalDialogs.PressTool }, untested, "every tool answered here (press-dialog-button: in DialogAnswersValidate)");
        }

        [Test]
        public void DialogAnswersValidate()
        {
            var dialogs = new FakeDialogs { Shown = { FakeDialogs.Dialog("Save Scene", "&Save", "Don&'t Save", "Cancel") } };
            var state = new EditorStateSource(new MainThreadQueue(), null, dialogs);
            var dispatcher = new Dispatcher(OutputSchemaCheck.PackageTools(), new SecurityChecker(() => new SecuritySettings { AllowPressingDialogButtons = true }), "0.1.0")
            {
                EditorState = state,
            };
            foreach (var shown in new[] { true, false })
            {
                var answer = JObject.Parse(Encoding.UTF8.GetString(dispatcher.Answer(Encoding.UTF8.GetBytes("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get-editor-state\"}"), new ToolContext()).Result));
                Assert.AreEqual(shown, answer["result"]["Dialog"] != null, answer.ToString());
                SchemaValidator.AssertValid(EditorStateSource.Method, OutputSchemaCheck.Catalogue[EditorStateSource.Method], (JObject)answer["result"]);
                if (shown)
                {
                    var pressed = dispatcher.Call(ModalDialogs.PressTool, JObject.Parse("{\"Button\":\"Cancel\"}"), new ToolContext()).Result;
                    SchemaValidator.AssertValid(ModalDialogs.PressTool, OutputSchemaCheck.Catalogue[ModalDialogs.PressTool], pressed);
                    dialogs.Shown.Clear();
                }
            }
        }
    }
}

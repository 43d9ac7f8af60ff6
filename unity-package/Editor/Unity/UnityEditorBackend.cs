// IEditorBackend with Unity's APIs: the console (UnityEditor.LogEntries, by
// reflection, as the seeds read it), the open scene, CompilationPipeline,
// TestRunnerApi, [MenuItem] methods, the Search API, Editor windows and play
// mode. Every Unity call runs on the main thread through the queue.

using System;
using System.Diagnostics;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityEditor;
using UnityEditor.Compilation;
using UnityEditor.TestTools.TestRunner.Api;
using UnityEngine;
using UnityEngine.SceneManagement;
using UnityMcp.Core;
using CoreTestMode = UnityMcp.Core.TestMode;
using CoreLogEntry = UnityMcp.Core.LogEntry;
using CoreSearchItem = UnityMcp.Core.SearchItem;

namespace UnityMcp.Editor
{
    public sealed class UnityEditorBackend : IEditorBackend
    {
        readonly MainThreadQueue main;

        public UnityEditorBackend(MainThreadQueue main)
        {
            this.main = main;
            ProjectPath = McpServerController.Project;
        }

        // GetResult, not Result or Wait: the tools catch what Unity threw
        // (ArgumentException for a query it refuses), not an AggregateException.
        T OnMain<T>(Func<T> body) => main.Run(body).GetAwaiter().GetResult();

        void OnMain(Action body) => main.Run(() => { body(); return true; }).GetAwaiter().GetResult();

        public string ProjectPath { get; }

        /// <summary>What get-version reports (main thread).</summary>
        public EditorInfo Info()
        {
            return new EditorInfo
            {
                UnityVersion = Application.unityVersion,
                Platform = Application.platform.ToString(),
                DataPath = Application.dataPath,
                ProductName = Application.productName,
                PackageVersion = McpServerController.PackageVersion,
                InstanceId = EditorInstanceId(),
                Capabilities = new[] { "resume", "progress", "newline-framing", "image-data" },
            };
        }

        const string InstanceIdKey = "UnityMcp.EditorInstanceId";

        /// <summary>
        /// This Editor process: kept in SessionState, which survives domain
        /// reloads and is empty when Unity starts, as the resume journal is.
        /// </summary>
        static string EditorInstanceId()
        {
            var id = SessionState.GetString(InstanceIdKey, "");
            if (string.IsNullOrEmpty(id))
            {
                id = Guid.NewGuid().ToString();
                SessionState.SetString(InstanceIdKey, id);
            }
            return id;
        }

        // ---- console (UnityConsole: UnityEditor.LogEntries by reflection) ----

        public List<CoreLogEntry> ReadConsole() => OnMain(UnityConsole.ReadAll);

        public List<CoreLogEntry> ClearConsole()
        {
            var before = ReadConsole();
            OnMain(UnityConsole.Clear);
            return before;
        }

        public void Log(CoreLogEntry entry)
        {
            OnMain(() =>
            {
                if (entry.Type == "Error")
                {
                    UnityEngine.Debug.LogError(entry.Message);
                }
                else if (entry.Type == "Warning")
                {
                    UnityEngine.Debug.LogWarning(entry.Message);
                }
                else
                {
                    UnityEngine.Debug.Log(entry.Message);
                }
            });
        }

        // ---- scene and play mode ----

        public string SceneName => OnMain(() => SceneManager.GetActiveScene().name);

        public List<SceneObject> SceneRoots()
        {
            return OnMain(() => SceneManager.GetActiveScene().GetRootGameObjects().Select(Model).ToList());
        }

        static SceneObject Model(GameObject go)
        {
            var model = new SceneObject { Name = go.name, Tag = go.tag, Layer = go.layer, Active = go.activeSelf };
            SetIdentity(model, go);
            foreach (var component in go.GetComponents<Component>())
            {
                if (component == null)
                {
                    continue; // a missing script
                }
                var type = component.GetType();
                model.Components.Add(new SceneComponent
                {
                    TypeName = type.Name,
                    Namespace = type.Namespace ?? "",
                    Assembly = type.Assembly.GetName().Name,
                    Properties = Properties(component),
                    HasEnabled = component is Behaviour || component is Renderer || component is Collider,
                });
            }
            for (var i = 0; i < go.transform.childCount; i++)
            {
                model.Children.Add(Model(go.transform.GetChild(i).gameObject));
            }
            return model;
        }

        /// <summary>
        /// The object's identity (docs/editor-link-protocol.md §6). Unity
        /// 6000.4 deprecated GetInstanceID for GetEntityId (a warning), and
        /// 6000.5 made it an error (CS0619) and the EntityId 64 bits;
        /// EntityId.ToULong, from 6000.4, is the supported way to its number
        /// (in 6000.4 an int, sign-extended).
        /// </summary>
        static void SetIdentity(SceneObject model, UnityEngine.Object obj)
        {
#if UNITY_6000_5_OR_NEWER
            ObjectIdentity.FromEntityId(model, EntityId.ToULong(obj.GetEntityId()));
#elif UNITY_6000_4_OR_NEWER
            ObjectIdentity.FromInstanceId(model, unchecked((int)EntityId.ToULong(obj.GetEntityId())));
#else
            ObjectIdentity.FromInstanceId(model, obj.GetInstanceID());
#endif
        }

        /// <summary>The component's visible serialized properties (top level, simple values).</summary>
        static JObject Properties(Component component)
        {
            var json = new JObject();
            var serialized = new SerializedObject(component);
            var property = serialized.GetIterator();
            var enter = true;
            while (property.NextVisible(enter))
            {
                enter = false;
                if (property.name == "m_Script")
                {
                    continue;
                }
                var name = property.name.StartsWith("m_", StringComparison.Ordinal) && property.name.Length > 2
                    ? char.ToLowerInvariant(property.name[2]) + property.name.Substring(3) : property.name;
                switch (property.propertyType)
                {
                    case SerializedPropertyType.Integer:
                        json[name] = property.intValue;
                        break;
                    case SerializedPropertyType.Boolean:
                        json[name] = property.boolValue;
                        break;
                    case SerializedPropertyType.Float:
                        json[name] = property.floatValue;
                        break;
                    case SerializedPropertyType.String:
                        json[name] = property.stringValue;
                        break;
                    case SerializedPropertyType.Enum:
                        json[name] = property.enumValueIndex >= 0 && property.enumValueIndex < property.enumNames.Length ? property.enumNames[property.enumValueIndex] : property.intValue.ToString();
                        break;
                    case SerializedPropertyType.Vector2:
                        json[name] = new JObject { ["x"] = property.vector2Value.x, ["y"] = property.vector2Value.y };
                        break;
                    case SerializedPropertyType.Vector3:
                        json[name] = new JObject { ["x"] = property.vector3Value.x, ["y"] = property.vector3Value.y, ["z"] = property.vector3Value.z };
                        break;
                    case SerializedPropertyType.Quaternion:
                        var q = property.quaternionValue;
                        json[name] = new JObject { ["x"] = q.x, ["y"] = q.y, ["z"] = q.z, ["w"] = q.w };
                        break;
                    case SerializedPropertyType.Color:
                        var c = property.colorValue;
                        json[name] = new JObject { ["r"] = c.r, ["g"] = c.g, ["b"] = c.b, ["a"] = c.a };
                        break;
                }
            }
            return json;
        }

        public bool IsPlaying => OnMain(() => EditorApplication.isPlaying);

        public bool IsPaused => OnMain(() => EditorApplication.isPaused);

        // Unity's own test (ObjectPool/PoolManager.cs): the domain reloads
        // unless the options are enabled and DisableDomainReload set. Unity 6
        // shows only the options and keeps the box enabled.
        public bool EnteringPlayModeReloadsDomain => OnMain(() =>
            !(EditorSettings.enterPlayModeOptionsEnabled && (EditorSettings.enterPlayModeOptions & EnterPlayModeOptions.DisableDomainReload) != 0));

        public string ApplyPlayAction(PlayAction action)
        {
            return OnMain(() =>
            {
                switch (action)
                {
                    case PlayAction.Play:
                        if (EditorApplication.isPlaying && EditorApplication.isPaused)
                        {
                            EditorApplication.isPaused = false;
                            return "Play mode resumed";
                        }
                        if (EditorApplication.isPlaying)
                        {
                            return "Already in play mode";
                        }
                        EditorApplication.isPlaying = true;
                        return "Entered play mode";
                    case PlayAction.Stop:
                        if (!EditorApplication.isPlaying)
                        {
                            return "Not in play mode";
                        }
                        EditorApplication.isPlaying = false;
                        return "Exited play mode";
                    default:
                        EditorApplication.isPaused = true;
                        return EditorApplication.isPlaying ? "Play mode paused" : "Paused: play mode will start paused";
                }
            });
        }

        // ---- compile ----

        public Task<CompileReport> Compile(bool force, ToolContext context, Action<CompileReport> finished)
        {
            var done = new TaskCompletionSource<CompileReport>();
            OnMain(() =>
            {
                var report = new CompileReport();
                var compiledAnything = false;
                Action<string, CompilerMessage[]> collect = (assembly, messages) =>
                {
                    compiledAnything = true;
                    foreach (var m in messages.Where(m => m.type != CompilerMessageType.Info))
                    {
                        report.Diagnostics.Add(Diagnostic(m));
                    }
                };
                var started = false;
                Action<object> whenStarted = _ => started = true;
                var waited = Stopwatch.StartNew();
                EditorApplication.CallbackFunction watch = null;
                Action<object> whenFinished = null;
                whenFinished = _ =>
                {
                    CompilationPipeline.assemblyCompilationFinished -= collect;
                    CompilationPipeline.compilationStarted -= whenStarted;
                    CompilationPipeline.compilationFinished -= whenFinished;
                    EditorApplication.update -= watch;
                    // New assemblies load with a domain reload, before the answer can be sent.
                    report.ReloadFollows = compiledAnything && report.Diagnostics.All(d => !d.IsError);
                    context.Progress(2, 2, "Compilation finished");
                    finished(report);
                    done.TrySetResult(report);
                };
                // isCompiling is true from the request on, so it cannot say
                // whether Unity found anything to compile; compilationStarted
                // can. Checked every tick: nothing started once the request has
                // been looked at means nothing to compile; nothing finished by
                // the deadline (play mode set to compile after playing, a
                // locked script) is said, not waited for.
                watch = () =>
                {
                    if (done.Task.IsCompleted)
                    {
                        EditorApplication.update -= watch;
                    }
                    else if (!started && !EditorApplication.isCompiling && waited.Elapsed > NothingToCompileAfter)
                    {
                        whenFinished(null);
                    }
                    else if (waited.Elapsed > CompileDeadline)
                    {
                        CompilationPipeline.assemblyCompilationFinished -= collect;
                        CompilationPipeline.compilationStarted -= whenStarted;
                        CompilationPipeline.compilationFinished -= whenFinished;
                        EditorApplication.update -= watch;
                        done.TrySetException(new InvalidOperationException(
                            "Unity did not finish compiling within " + CompileDeadline.TotalSeconds + " s (" + (started ? "it started" : "it never started")
                            + "); in play mode Unity may wait to compile until play mode ends"));
                    }
                };
                CompilationPipeline.assemblyCompilationFinished += collect;
                CompilationPipeline.compilationStarted += whenStarted;
                CompilationPipeline.compilationFinished += whenFinished;
                EditorApplication.update += watch;
                context.Progress(0, 2, "Refreshing assets");
                AssetDatabase.Refresh();
                context.Progress(1, 2, "Compiling scripts");
                if (force)
                {
                    CompilationPipeline.RequestScriptCompilation(RequestScriptCompilationOptions.CleanBuildCache);
                }
                else
                {
                    CompilationPipeline.RequestScriptCompilation();
                }
            });
            return done.Task;
        }

        /// <summary>How long after the request a compilation that has not started means there was nothing to compile.</summary>
        static readonly TimeSpan NothingToCompileAfter = TimeSpan.FromSeconds(2);

        /// <summary>How long a compilation may take before compile says it did not finish (below the tool's own timeout).</summary>
        static readonly TimeSpan CompileDeadline = TimeSpan.FromSeconds(280);

        static Diagnostic Diagnostic(CompilerMessage m)
        {
            // "Assets/A.cs(3,1): error CS1029: text" → code and text.
            var text = m.message ?? "";
            var code = "";
            var marker = m.type == CompilerMessageType.Error ? "error " : "warning ";
            var at = text.IndexOf(marker, StringComparison.Ordinal);
            if (at >= 0)
            {
                var rest = text.Substring(at + marker.Length);
                var colon = rest.IndexOf(':');
                if (colon > 0)
                {
                    code = rest.Substring(0, colon);
                    text = rest.Substring(colon + 1).Trim();
                }
            }
            return new Diagnostic { IsError = m.type == CompilerMessageType.Error, File = (m.file ?? "").Replace('\\', '/'), Line = m.line, Column = m.column, Code = code, Text = text };
        }

        // ---- tests (the Test Framework's TestRunnerApi) ----

        public Task<List<TestResult>> RunTests(TestSelection selection, ToolContext context)
        {
            var done = new TaskCompletionSource<List<TestResult>>();
            OnMain(() =>
            {
                var api = ScriptableObject.CreateInstance<TestRunnerApi>();
                var filter = new Filter { testMode = selection.Mode == CoreTestMode.PlayMode ? UnityEditor.TestTools.TestRunner.Api.TestMode.PlayMode : UnityEditor.TestTools.TestRunner.Api.TestMode.EditMode };
                switch (selection.FilterType)
                {
                    case TestFilterType.exact:
                        filter.testNames = new[] { selection.FilterValue };
                        break;
                    case TestFilterType.regex:
                        filter.groupNames = new[] { selection.FilterValue };
                        break;
                    case TestFilterType.assembly:
                        filter.assemblyNames = new[] { selection.FilterValue };
                        break;
                }
                var callbacks = new TestCallbacks(done, context);
                // The Test Framework keeps registered callbacks for every later
                // run: this run's go once it has finished.
                callbacks.Finished = () => api.UnregisterCallbacks(callbacks);
                api.RegisterCallbacks(callbacks);
                api.Execute(new ExecutionSettings(filter));
            });
            return done.Task;
        }

        internal sealed class TestCallbacks : ICallbacks
        {
            readonly TaskCompletionSource<List<TestResult>> done;
            readonly ToolContext context;
            int finished;

            public TestCallbacks(TaskCompletionSource<List<TestResult>> done, ToolContext context)
            {
                this.done = done;
                this.context = context;
            }

            public void RunStarted(ITestAdaptor testsToRun)
            {
            }

            /// <summary>Called once the run has finished (on the main thread, where the Test Framework calls back).</summary>
            public Action Finished { get; set; } = delegate { };

            public void RunFinished(ITestResultAdaptor result)
            {
                done.TrySetResult(ResultsOf(result));
                Finished();
            }

            public void TestStarted(ITestAdaptor test)
            {
            }

            public void TestFinished(ITestResultAdaptor result)
            {
                if (!result.HasChildren)
                {
                    finished++;
                    context.Progress(finished, null, result.Test.FullName);
                }
            }

            /// <summary>A finished run's tests (not its suites), in run order.</summary>
            internal static List<TestResult> ResultsOf(ITestResultAdaptor run)
            {
                var results = new List<TestResult>();
                Collect(run, "", results);
                return results;
            }

            static void Collect(ITestResultAdaptor node, string assembly, List<TestResult> into)
            {
                if (node.Test.Name.EndsWith(".dll", StringComparison.Ordinal))
                {
                    assembly = node.Test.Name.Substring(0, node.Test.Name.Length - 4);
                }
                if (!node.HasChildren && !node.Test.IsSuite)
                {
                    into.Add(new TestResult
                    {
                        FullName = node.Test.FullName,
                        Assembly = assembly,
                        Outcome = node.TestStatus == TestStatus.Passed ? TestOutcome.Passed : node.TestStatus == TestStatus.Failed ? TestOutcome.Failed : TestOutcome.Skipped,
                        DurationMs = (long)(node.Duration * 1000),
                        Message = node.Message ?? "",
                        StackTrace = node.StackTrace ?? "",
                    });
                    return;
                }
                foreach (var child in node.Children)
                {
                    Collect(child, assembly, into);
                }
            }
        }

        // ---- menus ----

        public List<MenuItemInfo> MenuItems()
        {
            return OnMain(() =>
            {
                var items = new List<MenuItemInfo>();
                foreach (var method in TypeCache.GetMethodsWithAttribute<MenuItem>())
                {
                    foreach (MenuItem attribute in method.GetCustomAttributes(typeof(MenuItem), false))
                    {
                        items.Add(new MenuItemInfo
                        {
                            Path = attribute.menuItem,
                            MethodName = method.Name,
                            TypeName = method.DeclaringType.FullName,
                            AssemblyName = method.DeclaringType.Assembly.GetName().Name,
                            Priority = attribute.priority,
                            IsValidateFunction = attribute.validate,
                        });
                    }
                }
                return items.OrderBy(i => i.Path, StringComparer.Ordinal).ToList();
            });
        }

        public MenuExecution ExecuteMenuItem(string path, bool useReflectionFallback)
        {
            return OnMain(() =>
            {
                if (EditorApplication.ExecuteMenuItem(path))
                {
                    return new MenuExecution { Found = true, Success = true, Method = "EditorApplication", Details = "Menu item executed successfully" };
                }
                if (useReflectionFallback)
                {
                    foreach (var method in TypeCache.GetMethodsWithAttribute<MenuItem>())
                    {
                        var attribute = method.GetCustomAttributes(typeof(MenuItem), false).Cast<MenuItem>().FirstOrDefault(a => a.menuItem == path && !a.validate);
                        if (attribute != null && method.IsStatic && method.GetParameters().Length == 0)
                        {
                            method.Invoke(null, null);
                            return new MenuExecution { Found = true, Success = true, Method = "Reflection", Details = "Menu item executed successfully through reflection" };
                        }
                    }
                }
                return new MenuExecution { Error = "Menu item not found: " + path };
            });
        }

        // ---- search (the Search API) ----

        public List<SearchProviderInfo> SearchProviders()
        {
            return OnMain(() => UnityEditor.Search.SearchService.Providers.Select(p => new SearchProviderInfo
            {
                Id = p.id,
                DisplayName = p.name,
                Description = p.name,
                Priority = p.priority,
                IsActive = p.active,
                FilterId = p.filterId ?? "",
            }).ToList());
        }

        public List<CoreSearchItem> Search(string query, List<SearchProviderInfo> providers, bool includePackages)
        {
            return OnMain(() =>
            {
                var flags = UnityEditor.Search.SearchFlags.Synchronous | (includePackages ? UnityEditor.Search.SearchFlags.Packages : UnityEditor.Search.SearchFlags.None);
                using (var context = UnityEditor.Search.SearchService.CreateContext(providers.Select(p => p.Id).ToArray(), query, flags))
                using (var results = UnityEditor.Search.SearchService.Request(context, flags))
                {
                    var found = new List<CoreSearchItem>();
                    foreach (var item in results)
                    {
                        var path = item.provider.id == "asset" ? AssetDatabase.GUIDToAssetPath(item.id) : "";
                        if (path.Length == 0)
                        {
                            path = item.id;
                        }
                        var type = item.provider.id == "asset" ? AssetDatabase.GetMainAssetTypeAtPath(path) : null;
                        var file = path.Substring(path.LastIndexOf('/') + 1);
                        var dot = file.LastIndexOf('.');
                        found.Add(new CoreSearchItem
                        {
                            Id = item.id,
                            Label = item.GetLabel(context),
                            Description = item.GetDescription(context),
                            Provider = item.provider.id,
                            Type = type != null ? type.Name : item.provider.id == "scene" ? "GameObject" : "",
                            Path = path,
                            Extension = item.provider.id == "asset" && dot >= 0 ? file.Substring(dot + 1).ToLowerInvariant() : "",
                            Score = item.score,
                        });
                    }
                    return found;
                }
            });
        }

        // ---- windows ----

        public string FocusWindow()
        {
            return OnMain(() =>
            {
                if (Application.platform == RuntimePlatform.LinuxEditor)
                {
                    throw new InvalidOperationException("Bringing the Editor to the front is supported on macOS and Windows, not on Linux");
                }
                var window = Resources.FindObjectsOfTypeAll<EditorWindow>().FirstOrDefault();
                if (window == null)
                {
                    throw new InvalidOperationException("The Editor has no window to focus (batch mode)");
                }
                window.Focus();
                return "Unity Editor window for " + Application.productName + " brought to front";
            });
        }

        public List<string> Windows()
        {
            return OnMain(() => Resources.FindObjectsOfTypeAll<EditorWindow>().Select(w => w.titleContent.text).Distinct().ToList());
        }

        public Capture CaptureWindow(string name, double scale)
        {
            return OnMain(() =>
            {
                if (Application.isBatchMode)
                {
                    throw new InvalidOperationException("Screenshots need the Editor's graphics; this Editor runs in batch mode");
                }
                var window = Resources.FindObjectsOfTypeAll<EditorWindow>().First(w => w.titleContent.text == name);
                window.Focus();
                window.Repaint();
                var rect = window.position;
                var width = Math.Max(1, (int)rect.width);
                var height = Math.Max(1, (int)rect.height);
                var pixels = UnityEditorInternal.InternalEditorUtility.ReadScreenPixel(rect.position, width, height);
                var scaledWidth = Math.Max(1, (int)Math.Round(width * scale));
                var scaledHeight = Math.Max(1, (int)Math.Round(height * scale));
                var scaled = new Color[scaledWidth * scaledHeight];
                for (var y = 0; y < scaledHeight; y++)
                {
                    for (var x = 0; x < scaledWidth; x++)
                    {
                        scaled[y * scaledWidth + x] = pixels[Math.Min(height - 1, (int)(y / scale)) * width + Math.Min(width - 1, (int)(x / scale))];
                    }
                }
                var texture = new Texture2D(scaledWidth, scaledHeight, TextureFormat.RGB24, false);
                try
                {
                    texture.SetPixels(scaled);
                    texture.Apply();
                    return new Capture { Width = scaledWidth, Height = scaledHeight, Png = texture.EncodeToPNG() };
                }
                finally
                {
                    UnityEngine.Object.DestroyImmediate(texture);
                }
            });
        }

        // ---- dynamic code ----

        /// <summary>CodeDom against every assembly the Editor has loaded, with UnityEngine and UnityEditor in scope.</summary>
        public CodeDomRunner SnippetRunner()
        {
            var runner = new CodeDomRunner();
            runner.Preamble += "using UnityEngine;\nusing UnityEditor;\n";
            runner.References = AppDomain.CurrentDomain.GetAssemblies()
                .Where(a => !a.IsDynamic && !string.IsNullOrEmpty(a.Location))
                .Select(a => a.Location).Distinct().ToList();
            return runner;
        }

        /// <summary>Runs the snippet on the main thread, awaited: the call's deadline is answered even while it runs.</summary>
        public Task<CodeRun> ExecuteSnippet(PreparedSnippet snippet, JObject parameters, SnippetLimits limits, DateTime deadline)
        {
            return main.Run(() =>
            {
                var logs = new List<string>();
                Application.LogCallback capture = (condition, stack, type) => logs.Add(condition);
                Application.logMessageReceived += capture;
                try
                {
                    var run = new CodeDomRunner().Execute(snippet, parameters, limits, deadline);
                    run.Logs = logs;
                    return run;
                }
                finally
                {
                    Application.logMessageReceived -= capture;
                }
            });
        }
    }
}

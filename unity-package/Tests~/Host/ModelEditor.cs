// The headless host's Editor: a model of the Unity project read from a
// fixture editor state (fixtures/editor-states, the same files fake-unity
// reads) plus the project folder itself (scripts for compile, the package
// manifest for search). It answers IEditorBackend, so the core's real tool
// bodies run against it. What it cannot model, it says.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public sealed partial class ModelEditor : IEditorBackend
    {
        readonly object gate = new object();
        readonly JObject state;
        readonly List<ConsoleLine> console = new List<ConsoleLine>();
        readonly List<SceneObject> roots;
        Dictionary<string, string> compiledScripts;
        long nextInstanceId = -1000;

        sealed class ConsoleLine
        {
            public LogEntry Entry;
            public bool FromCompile;
        }

        /// <summary>Asks the host to reload the domain (a compile with new assemblies, entering play mode).</summary>
        public Action RequestReload = delegate { };

        /// <summary>
        /// Reloads the domain; done once the next domain's server is up. Null
        /// for a model without a host (the tools' own tests): no domain to
        /// reload, so entering play mode keeps it.
        /// </summary>
        public Func<Task> Reload;

        /// <summary>
        /// The current domain's PlayMode runs: what the callbacks the domain
        /// registered when it loaded are told, as Unity's Test Framework
        /// tells them (the host sets it as each domain loads).
        /// </summary>
        public ITestRunCallbacks TestRunCallbacks;

        public ModelEditor(JObject state, string project)
        {
            this.state = state;
            ProjectPath = Path.GetFullPath(project).Replace('\\', '/').TrimEnd('/');
            foreach (var entry in Array("console"))
            {
                console.Add(new ConsoleLine { Entry = new LogEntry { Type = (string)entry["type"], Message = (string)entry["message"], StackTrace = (string)entry["stackTrace"] ?? "" } });
            }
            entityIds = EntityIdsAre64Bit((string)state["editor"]["unityVersion"]);
            roots = ((JArray)state["scene"]["roots"]).Select(o => SceneObjectOf((JObject)o)).ToList();
            compiledScripts = Scripts();
        }

        /// <summary>An editor state file, with "extends" resolved (objects merge, "name+" appends).</summary>
        public static JObject LoadState(string path)
        {
            var text = File.ReadAllText(path);
            var state = (JObject)ParseJson(text);
            var parent = (string)state["extends"];
            if (parent == null)
            {
                return state;
            }
            state.Remove("extends");
            var merged = LoadState(Path.Combine(Path.GetDirectoryName(path), parent));
            Merge(merged, state);
            return merged;
        }

        /// <summary>JSON as written: no strings turned into dates.</summary>
        public static JToken ParseJson(string text)
        {
            using (var reader = new Newtonsoft.Json.JsonTextReader(new StringReader(text)) { DateParseHandling = Newtonsoft.Json.DateParseHandling.None })
            {
                return JToken.ReadFrom(reader);
            }
        }

        static void Merge(JObject into, JObject from)
        {
            foreach (var property in from.Properties())
            {
                if (property.Name.EndsWith("+", StringComparison.Ordinal))
                {
                    var name = property.Name.Substring(0, property.Name.Length - 1);
                    var list = into[name] as JArray ?? new JArray();
                    foreach (var item in (JArray)property.Value)
                    {
                        list.Add(item.DeepClone());
                    }
                    into[name] = list;
                }
                else if (property.Value is JObject && into[property.Name] is JObject)
                {
                    Merge((JObject)into[property.Name], (JObject)property.Value);
                }
                else
                {
                    into[property.Name] = property.Value.DeepClone();
                }
            }
        }

        IEnumerable<JObject> Array(string name) => state[name] is JArray ? ((JArray)state[name]).Cast<JObject>() : Enumerable.Empty<JObject>();

        JObject Info => (JObject)state["editor"];

        public string ProjectPath { get; }

        /// <summary>Whether the caller is on the Editor's main thread (the host sets it; alone, anywhere is).</summary>
        public Func<bool> OnMainThread { get; set; } = () => true;

        /// <summary>Unity's APIs throw off the main thread; so does the model.</summary>
        internal void MainThreadOnly(string api)
        {
            if (!OnMainThread())
            {
                throw new InvalidOperationException("UnityException: " + api + " can only be called from the main thread.");
            }
        }

        static readonly string ProcessInstanceId = System.Guid.NewGuid().ToString();

        /// <summary>What get-version reports.</summary>
        public EditorInfo EditorInfo(bool resume)
        {
            var info = new EditorInfo
            {
                UnityVersion = (string)Info["unityVersion"],
                Platform = (string)Info["platform"],
                DataPath = ProjectPath + "/Assets",
                ProductName = (string)Info["productName"],
                PackageVersion = (string)Info["packageVersion"],
                // The host process is the Editor process: its journal store
                // lives as long as it does.
                InstanceId = ProcessInstanceId,
            };
            if (resume)
            {
                info.Capabilities = new[] { "resume" }.Concat(info.Capabilities).ToArray();
            }
            return info;
        }

        /// <summary>The security settings the state starts with.</summary>
        public SecuritySettings InitialSettings()
        {
            var s = (JObject)state["settings"];
            return new SecuritySettings
            {
                EnableTestsExecution = (bool)s["enableTestsExecution"],
                AllowMenuItemExecution = (bool)s["allowMenuItemExecution"],
                // Optional in a state file (off by default).
                AllowPressingDialogButtons = (bool?)s["allowPressingDialogButtons"] ?? false,
                DynamicCodeSecurityLevel = (DynamicCodeSecurityLevel)Enum.Parse(typeof(DynamicCodeSecurityLevel), (string)s["dynamicCodeSecurityLevel"]),
                AllowThirdPartyTools = (bool)s["allowThirdPartyTools"],
                DisabledTools = ((JArray)s["disabledTools"]).Select(t => (string)t).ToList(),
                // Optional in a state file, as in fake-unity's (off by default).
                AllowClientsWithoutToken = (bool?)s["allowClientsWithoutToken"] ?? false,
            };
        }

        public int ReloadDowntimeMs => (int)Info["reloadDowntimeMs"];

        public int ToolsReadyDelayMs => (int)Info["toolsReadyDelayMs"];

        // ---- console ----

        public List<LogEntry> ReadConsole()
        {
            MainThreadOnly("ReadConsole");
            lock (gate)
            {
                return console.Select(c => c.Entry).ToList();
            }
        }

        public List<LogEntry> ClearConsole()
        {
            MainThreadOnly("ClearConsole");
            lock (gate)
            {
                var cleared = console.Select(c => c.Entry).ToList();
                console.Clear();
                return cleared;
            }
        }

        /// <summary>
        /// A domain's scripts loaded (at start and after every reload): what
        /// the project's [InitializeOnLoad] code logs ("loadLogs" of the
        /// state) reaches the Console again, as it does in Unity.
        /// </summary>
        public void ScriptsLoaded()
        {
            lock (gate)
            {
                foreach (var entry in Array("loadLogs"))
                {
                    console.Add(new ConsoleLine { Entry = new LogEntry { Type = (string)entry["type"], Message = (string)entry["message"], StackTrace = (string)entry["stackTrace"] ?? "" } });
                }
            }
        }

        public void Log(LogEntry entry)
        {
            MainThreadOnly("Debug.Log");
            lock (gate)
            {
                console.Add(new ConsoleLine { Entry = entry });
            }
        }

        // ---- scene and play mode ----

        public string SceneName
        {
            get
            {
                MainThreadOnly("SceneManager.GetActiveScene");
                return (string)state["scene"]["name"];
            }
        }

        // Whether the Unity this models names objects by a 64-bit EntityId (6000.5 and newer).
        readonly bool entityIds;

        static bool EntityIdsAre64Bit(string unityVersion)
        {
            var parts = (unityVersion ?? "").Split('.');
            int major, minor;
            return parts.Length >= 2 && int.TryParse(parts[0], out major) && int.TryParse(parts[1], out minor)
                && (major > 6000 || major == 6000 && minor >= 5);
        }

        /// <summary>
        /// An object's identity as the modelled Unity gives it: its instance ID,
        /// or from 6000.5 an EntityId made as 6000.5 makes one (a version tag in
        /// the high 32 bits, the index below), so ids past 2^53 are seen.
        /// </summary>
        void SetIdentity(SceneObject go, long instanceId)
        {
            if (entityIds)
            {
                ObjectIdentity.FromEntityId(go, (0x7E25105UL << 32) | unchecked((uint)(int)instanceId));
            }
            else
            {
                ObjectIdentity.FromInstanceId(go, unchecked((int)instanceId));
            }
        }

        SceneObject SceneObjectOf(JObject o)
        {
            var go = new SceneObject
            {
                Name = (string)o["name"],
                Tag = (string)o["tag"] ?? "Untagged",
                Layer = (int?)o["layer"] ?? 0,
                Active = (bool?)o["active"] ?? true,
            };
            SetIdentity(go, (long)o["instanceId"]);
            foreach (JObject c in (JArray)o["components"] ?? new JArray())
            {
                var type = (string)c["type"];
                go.Components.Add(new SceneComponent
                {
                    TypeName = type,
                    Namespace = (string)c["namespace"] ?? "",
                    Assembly = (string)c["assembly"] ?? "",
                    Properties = (JObject)c["properties"] ?? new JObject(),
                    InheritedProperties = (JObject)c["inheritedProperties"] ?? new JObject(),
                    HasEnabled = type != "Transform" && type != "MeshFilter" && type != "Rigidbody",
                });
            }
            foreach (JObject child in (JArray)o["children"] ?? new JArray())
            {
                go.Children.Add(SceneObjectOf(child));
            }
            return go;
        }

        public List<SceneObject> SceneRoots()
        {
            MainThreadOnly("SceneManager.GetActiveScene().GetRootGameObjects");
            lock (gate)
            {
                return roots.ToList();
            }
        }

        bool playing;

        bool paused;

        public bool IsPlaying
        {
            get
            {
                MainThreadOnly("EditorApplication.isPlaying");
                return playing;
            }
        }

        /// <summary>Play mode for the control API, which is no Unity code and waits for no main thread.</summary>
        public JObject PlayModeJson()
        {
            lock (gate)
            {
                return new JObject { ["isPlaying"] = playing, ["isPaused"] = paused };
            }
        }

        public bool IsPaused
        {
            get
            {
                MainThreadOnly("EditorApplication.isPaused");
                return paused;
            }
        }

        public string ApplyPlayAction(PlayAction action)
        {
            MainThreadOnly("EditorApplication.isPlaying");
            lock (gate)
            {
                switch (action)
                {
                    case PlayAction.Play:
                        if (playing && paused)
                        {
                            paused = false;
                            return "Play mode resumed";
                        }
                        if (playing)
                        {
                            return "Already in play mode";
                        }
                        playing = true;
                        paused = false;
                        if (ReloadsDomain())
                        {
                            Task.Delay(50).ContinueWith(_ => RequestReload());
                        }
                        return "Entered play mode";
                    case PlayAction.Stop:
                        if (!playing)
                        {
                            return "Not in play mode";
                        }
                        playing = false;
                        paused = false;
                        return "Exited play mode";
                    default:
                        paused = true;
                        return playing ? "Play mode paused" : "Paused: play mode will start paused";
                }
            }
        }

        public bool EnteringPlayModeReloadsDomain
        {
            get
            {
                MainThreadOnly("EditorSettings.enterPlayModeOptions");
                return ReloadsDomain();
            }
        }

        /// <summary>
        /// The project's Enter Play Mode settings as they are on disk
        /// (ProjectSettings/EditorSettings.asset): the domain reloads unless
        /// m_EnterPlayModeOptionsEnabled is on and m_EnterPlayModeOptions
        /// has DisableDomainReload (1), as Unity's own PoolManager tests it;
        /// a missing file or field is Unity's default, a reload.
        /// </summary>
        bool ReloadsDomain()
        {
            if (Reload == null)
            {
                return false;
            }
            var path = Path.Combine(ProjectPath, "ProjectSettings", "EditorSettings.asset");
            var text = File.Exists(path) ? File.ReadAllText(path) : "";
            Func<string, long> field = name =>
            {
                foreach (var line in text.Split('\n'))
                {
                    var trimmed = line.Trim();
                    long value;
                    if (trimmed.StartsWith(name + ":", StringComparison.Ordinal) && long.TryParse(trimmed.Substring(name.Length + 1).Trim(), out value))
                    {
                        return value;
                    }
                }
                return 0;
            };
            var enabled = field("m_EnterPlayModeOptionsEnabled") != 0;
            var options = field("m_EnterPlayModeOptions");
            return !(enabled && (options & 1) != 0);
        }

        // ---- compile ----

        /// <summary>Every script Unity would compile (Assets/**/*.cs, hidden and ~ folders skipped): path → text.</summary>
        Dictionary<string, string> Scripts()
        {
            var scripts = new Dictionary<string, string>(StringComparer.Ordinal);
            var stack = new Stack<string>();
            stack.Push(Path.Combine(ProjectPath, "Assets"));
            while (stack.Count > 0)
            {
                var dir = stack.Pop();
                if (!Directory.Exists(dir))
                {
                    continue;
                }
                foreach (var sub in Directory.GetDirectories(dir))
                {
                    var name = Path.GetFileName(sub);
                    if (!name.StartsWith(".", StringComparison.Ordinal) && !name.EndsWith("~", StringComparison.Ordinal))
                    {
                        stack.Push(sub);
                    }
                }
                foreach (var file in Directory.GetFiles(dir, "*.cs"))
                {
                    if (!Path.GetFileName(file).StartsWith(".", StringComparison.Ordinal))
                    {
                        scripts[file.Substring(ProjectPath.Length + 1).Replace('\\', '/')] = File.ReadAllText(file);
                    }
                }
            }
            return scripts;
        }

        static bool SameScripts(Dictionary<string, string> a, Dictionary<string, string> b)
        {
            return a.Count == b.Count && a.All(kv => b.ContainsKey(kv.Key) && b[kv.Key] == kv.Value);
        }

        /// <summary>#error and #warning directives, as the C# compiler reports them (CS1029, CS1030).</summary>
        static List<Diagnostic> Directives(Dictionary<string, string> scripts)
        {
            var found = new List<Diagnostic>();
            foreach (var script in scripts.OrderBy(s => s.Key, StringComparer.Ordinal))
            {
                var lines = script.Value.Split('\n');
                for (var n = 0; n < lines.Length; n++)
                {
                    var line = lines[n].TrimEnd('\r');
                    var trimmed = line.TrimStart();
                    var isError = trimmed.StartsWith("#error", StringComparison.Ordinal);
                    if (!isError && !trimmed.StartsWith("#warning", StringComparison.Ordinal))
                    {
                        continue;
                    }
                    var directive = isError ? "#error" : "#warning";
                    found.Add(new Diagnostic
                    {
                        IsError = isError,
                        File = script.Key,
                        Line = n + 1,
                        Column = line.Length - trimmed.Length + 1,
                        Code = isError ? "CS1029" : "CS1030",
                        Text = directive + ": '" + trimmed.Substring(directive.Length).Trim() + "'",
                    });
                }
            }
            return found;
        }

        /// <summary>What Unity compiles as it opens the project (a batch-mode start refuses to go on past an error).</summary>
        public List<Diagnostic> CompileAtStart() => CompileNow(false).Diagnostics;

        /// <summary>Compiles: this compile's messages replace the last one's in the console.</summary>
        CompileReport CompileNow(bool force)
        {
            var report = new CompileReport();
            foreach (JObject d in (JArray)state["compile"]["diagnostics"])
            {
                report.Diagnostics.Add(new Diagnostic
                {
                    IsError = (string)d["severity"] == "error",
                    File = (string)d["file"],
                    Line = (int)d["line"],
                    Column = (int)d["column"],
                    Code = (string)d["code"],
                    Text = (string)d["text"],
                });
            }
            var scripts = Scripts();
            report.Diagnostics.AddRange(Directives(scripts));
            lock (gate)
            {
                var changed = !SameScripts(scripts, compiledScripts);
                compiledScripts = scripts;
                console.RemoveAll(c => c.FromCompile);
                foreach (var d in report.Diagnostics)
                {
                    console.Add(new ConsoleLine { Entry = new LogEntry { Type = d.IsError ? "Error" : "Warning", Message = d.UnityMessage }, FromCompile = true });
                }
                // New assemblies: Unity reloads the domain before answering.
                report.ReloadFollows = report.Diagnostics.All(d => !d.IsError) && (changed || force);
            }
            return report;
        }

        public async Task<CompileReport> Compile(bool force, ToolContext context, Action<CompileReport> finished)
        {
            MainThreadOnly("CompilationPipeline.RequestScriptCompilation");
            var duration = (int)state["compile"]["durationMs"];
            context.Progress(0, 2, "Refreshing assets");
            await Task.Delay(duration / 2, context.Cancellation);
            context.Progress(1, 2, "Compiling scripts");
            await Task.Delay(duration - duration / 2, context.Cancellation);
            var report = CompileNow(force);
            context.Progress(2, 2, "Compilation finished");
            finished(report);
            if (report.ReloadFollows)
            {
                RequestReload();
            }
            return report;
        }

        /// <summary>Assets/Refresh: changed scripts are compiled and, when they compile, the domain reloads.</summary>
        async Task Refresh()
        {
            lock (gate)
            {
                if (SameScripts(Scripts(), compiledScripts))
                {
                    return;
                }
            }
            await Task.Delay((int)state["compile"]["durationMs"]);
            if (CompileNow(false).Diagnostics.All(d => !d.IsError))
            {
                RequestReload();
            }
        }

        // ---- menus ----

        public List<MenuItemInfo> MenuItems()
        {
            MainThreadOnly("Menu.GetMenuItems");
            return Array("menuItems").Where(m => (bool?)m["native"] != true).Select(m => new MenuItemInfo
            {
                Path = (string)m["path"],
                MethodName = (string)m["methodName"],
                TypeName = (string)m["typeName"],
                AssemblyName = (string)m["assemblyName"],
                Priority = (long?)m["priority"] ?? 0,
                IsValidateFunction = (bool?)m["isValidateFunction"] ?? false,
            }).ToList();
        }

        public MenuExecution ExecuteMenuItem(string path, bool useReflectionFallback)
        {
            MainThreadOnly("EditorApplication.ExecuteMenuItem");
            var item = Array("menuItems").FirstOrDefault(m => (string)m["path"] == path && (bool?)m["isValidateFunction"] != true);
            if (item == null)
            {
                return new MenuExecution { Error = "Menu item not found: " + path };
            }
            var run = new MenuExecution { Found = true, Success = true, Method = "EditorApplication", Details = "Menu item executed successfully" };
            var effect = (JObject)item["effect"] ?? new JObject { ["kind"] = "none" };
            switch ((string)effect["kind"])
            {
                case "refresh":
                    Task.Delay(20).ContinueWith(_ => Refresh());
                    break;
                case "togglePlay":
                    var entering = !playing;
                    ApplyPlayAction(entering ? PlayAction.Play : PlayAction.Stop);
                    run.Details += "; play mode " + (entering ? "entered" : "exited");
                    break;
                case "togglePause":
                    lock (gate)
                    {
                        paused = !paused;
                    }
                    run.Details += "; paused: " + (paused ? "true" : "false");
                    break;
                case "createEmpty":
                    string name;
                    lock (gate)
                    {
                        name = "GameObject";
                        for (var n = 1; roots.Any(g => g.Name == name); n++)
                        {
                            name = "GameObject (" + n + ")";
                        }
                        var created = new SceneObject { Name = name };
                        SetIdentity(created, nextInstanceId);
                        nextInstanceId -= 2;
                        created.Components.Add(new SceneComponent
                        {
                            TypeName = "Transform",
                            Namespace = "UnityEngine",
                            Assembly = "UnityEngine.CoreModule",
                            Properties = JObject.Parse("{\"position\":{\"x\":0.0,\"y\":0.0,\"z\":0.0}}"),
                        });
                        roots.Add(created);
                    }
                    run.Details += "; created '" + name + "'";
                    break;
                case "log":
                    Log(new LogEntry { Type = (string)effect["logType"], Message = (string)effect["message"], StackTrace = (string)item["typeName"] + ":" + (string)item["methodName"] + " ()" });
                    break;
            }
            return run;
        }

        // ---- search ----

        public List<SearchProviderInfo> SearchProviders()
        {
            MainThreadOnly("SearchService.Providers");
            return Array("searchProviders").Select(p => new SearchProviderInfo
            {
                Id = (string)p["id"],
                DisplayName = (string)p["displayName"],
                Description = (string)p["description"] ?? "",
                Priority = (long)p["priority"],
                IsActive = (bool)p["isActive"],
                FilterId = (string)p["filterId"] ?? "",
            }).ToList();
        }

        public List<SearchItem> Search(string query, List<SearchProviderInfo> providers, bool includePackages)
        {
            MainThreadOnly("SearchService.Request");
            var parsed = ModelSearch.Parse(query, SearchProviders());
            var found = new List<SearchItem>();
            foreach (var provider in providers)
            {
                found.AddRange(ModelSearch.Run(parsed, ItemsOf(provider.Id, includePackages)));
            }
            return found;
        }

        List<ModelSearch.Candidate> ItemsOf(string provider, bool includePackages)
        {
            switch (provider)
            {
                case "asset":
                    return Array("assets").Where(a => includePackages || !((string)a["path"]).StartsWith("Packages/", StringComparison.Ordinal)).Select(a =>
                    {
                        var path = (string)a["path"];
                        var file = path.Substring(path.LastIndexOf('/') + 1);
                        var dot = file.LastIndexOf('.');
                        return new SearchItem
                        {
                            Id = (string)a["guid"],
                            Label = file,
                            Description = path + " (" + (string)a["type"] + ")",
                            Provider = "asset",
                            Type = (string)a["type"],
                            Path = path,
                            Extension = dot < 0 ? "" : file.Substring(dot + 1).ToLowerInvariant(),
                            FileSize = (long?)a["sizeBytes"] ?? 0,
                            LastModified = (string)a["modified"] ?? "",
                        };
                    }).Select(i => new ModelSearch.Candidate(i)).ToList();
                case "scene":
                    return PlacedObject.Walk(SceneRoots()).Select(p => new ModelSearch.Candidate(new SearchItem
                    {
                        // Unity's scene provider names an item by the object's EntityId (its instance ID before 6000.5).
                        Id = p.Object.EntityId,
                        Label = p.Object.Name,
                        Description = p.Path + " (" + string.Join(", ", p.Object.Components.Select(c => c.TypeName).ToArray()) + ")",
                        Provider = "scene",
                        Type = "GameObject",
                        Path = p.Path,
                    }, p.Object.Components.Select(c => c.TypeName))).ToList();
                case "menu":
                    return Array("menuItems").Where(m => (bool?)m["isValidateFunction"] != true).Select(m =>
                    {
                        var path = (string)m["path"];
                        return new SearchItem
                        {
                            Id = path,
                            Label = path.Substring(path.LastIndexOf('/') + 1),
                            Description = (string)m["typeName"] + "." + (string)m["methodName"] + " (" + (string)m["assemblyName"] + ")",
                            Provider = "menu",
                            Type = "MenuItem",
                            Path = path,
                        };
                    }).Select(i => new ModelSearch.Candidate(i)).ToList();
                case "settings":
                    return new[] { "Project/Editor", "Project/Player", "Project/Physics", "Project/Quality", "Project/Tags and Layers", "Project/Time", "Preferences/General", "Preferences/External Tools" }
                        .Select(page => new SearchItem
                        {
                            Id = page,
                            Label = page.Substring(page.LastIndexOf('/') + 1),
                            Description = "Settings page " + page,
                            Provider = "settings",
                            Type = "SettingsPage",
                            Path = page,
                        }).Select(i => new ModelSearch.Candidate(i)).ToList();
                case "packages":
                    var manifest = Path.Combine(Path.Combine(ProjectPath, "Packages"), "manifest.json");
                    var dependencies = File.Exists(manifest) ? ParseJson(File.ReadAllText(manifest))["dependencies"] as JObject : null;
                    return (dependencies ?? new JObject()).Properties().Select(d => new SearchItem
                    {
                        Id = d.Name,
                        Label = d.Name,
                        Description = d.Name + "@" + (string)d.Value,
                        Provider = "packages",
                        Type = "Package",
                        Path = "Packages/" + d.Name,
                    }).Select(i => new ModelSearch.Candidate(i)).ToList();
                default:
                    return new List<ModelSearch.Candidate>();
            }
        }

        // ---- windows ----

        public string FocusWindow()
        {
            MainThreadOnly("EditorWindow.Focus");
            return "Unity Editor window for " + (string)Info["productName"] + " brought to front";
        }

        public List<string> Windows()
        {
            MainThreadOnly("Resources.FindObjectsOfTypeAll<EditorWindow>");
            return Array("windows").Select(w => (string)w["name"]).ToList();
        }

        public Capture CaptureWindow(string window, double scale)
        {
            MainThreadOnly("InternalEditorUtility.ReadScreenPixel");
            var w = Array("windows").First(x => (string)x["name"] == window);
            var width = Math.Max(1, (int)Math.Round((int)w["width"] * scale, MidpointRounding.AwayFromZero));
            var height = Math.Max(1, (int)Math.Round((int)w["height"] * scale, MidpointRounding.AwayFromZero));
            return new Capture { Width = width, Height = height, Png = Png.Picture(width, height, window, SceneRoots()) };
        }

        // ---- dynamic code ----

        /// <summary>CodeDom with this Editor's Debug, which writes to its console as UnityEngine.Debug would.</summary>
        public CodeDomRunner SnippetRunner() => SnippetRunnerLogging(Log, SnippetReferences);

        /// <summary>
        /// CodeDom whose snippets' Debug lines go to <paramref name="log"/>, as
        /// UnityEngine.Debug writes to the console; compiled and loaded in the
        /// caller's domain (the package's, as in Unity).
        /// </summary>
        public static CodeDomRunner SnippetRunnerLogging(Action<LogEntry> log, IEnumerable<string> references)
        {
            var runner = new CodeDomRunner();
            runner.Preamble += "public static class Debug\n{\n    public static System.Collections.Generic.List<string[]> Lines = new System.Collections.Generic.List<string[]>();\n"
                + "    public static void Log(object m) { Lines.Add(new[] { \"Log\", m == null ? \"Null\" : m.ToString() }); }\n"
                + "    public static void LogWarning(object m) { Lines.Add(new[] { \"Warning\", m == null ? \"Null\" : m.ToString() }); }\n"
                + "    public static void LogError(object m) { Lines.Add(new[] { \"Error\", m == null ? \"Null\" : m.ToString() }); }\n}\n";
            runner.PreambleTypes.Add("Debug");
            // As in Unity, the C# binder is there (so `dynamic` compiles, and Restricted refuses it).
            runner.References.Add("Microsoft.CSharp.dll");
            runner.References.AddRange(references);
            runner.Logs = assembly =>
            {
                var lines = (List<string[]>)assembly.GetType("Debug").GetField("Lines").GetValue(null);
                foreach (var line in lines)
                {
                    log(new LogEntry { Type = line[0], Message = line[1], StackTrace = "UnityEngine.Debug:Log (object)" });
                }
                return lines.Select(l => l[1]).ToList();
            };
            return runner;
        }

        /// <summary>More assemblies snippets compile against (the host's --snippet-reference: Unity's API as stubs, say).</summary>
        public List<string> SnippetReferences = new List<string>();

        public Task<CodeRun> ExecuteSnippet(PreparedSnippet snippet, JObject parameters, SnippetLimits limits, DateTime deadline)
        {
            MainThreadOnly("the dynamic code's execution");
            return Task.FromResult(SnippetRunner().Execute(snippet, parameters, limits, deadline));
        }
    }
}

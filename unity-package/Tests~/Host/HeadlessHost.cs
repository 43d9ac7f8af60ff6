// The headless host's Editor lifecycle (§5): the real core server started,
// reloaded (shutdown notifications, sockets closed, downtime, rebound on the
// same port or a new one, a new session, list_changed once the tools are
// back) and quit, as the Editor layer does it inside Unity. The resume
// journal's store outlives each "domain", as SessionState does in Unity.
// The control API (ControlApi.cs) drives it; fault rules a case may add
// (a slow tool, tools missing after a reload) are the only faults it knows.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public sealed class HeadlessHost
    {
        readonly ModelEditor editor;
        readonly EditorInfo info;
        readonly IJournalStore journalStore = new MemoryJournalStore();
        readonly SemaphoreSlim lifecycle = new SemaphoreSlim(1, 1);
        readonly object gate = new object();
        readonly List<JObject> faults = new List<JObject>();
        readonly HashSet<string> removed = new HashSet<string>();
        SecuritySettings settings;
        EditorServer server;
        ToolRegistry registry;
        string sessionId = "";

        public HeadlessHost(ModelEditor editor)
        {
            this.editor = editor;
            info = editor.EditorInfo(true);
            settings = editor.InitialSettings();
            editor.RequestReload = () => { Reload(null, false).ContinueWith(t => Console.Error.WriteLine(t.Exception), TaskContinuationOptions.OnlyOnFaulted); };
        }

        /// <summary>Set when the Editor has quit.</summary>
        public readonly TaskCompletionSource<bool> Quit = new TaskCompletionSource<bool>();

        public int Port => server != null ? server.Port : 0;

        public string Project => editor.ProjectPath;

        public SecuritySettings Settings => settings;

        public void Start(int port)
        {
            StartDomain(port);
        }

        void StartDomain(int port)
        {
            sessionId = Guid.NewGuid().ToString("N");
            registry = new ToolRegistry();
            AddMissingTools();
            var dispatcher = new Dispatcher(registry, new SecurityChecker(() => settings), info.PackageVersion)
            {
                Backend = editor,
                Editor = info,
                Journal = new RequestJournal(journalStore),
                ProjectRoot = editor.ProjectPath,
                ServerSessionId = sessionId,
            };
            server = new EditorServer(dispatcher);
            server.Start(port);
            WriteDiscovery("ready");
        }

        void WriteDiscovery(string state)
        {
            DiscoveryFile.Write(editor.ProjectPath, new DiscoveryInfo
            {
                Port = Port,
                Pid = Process.GetCurrentProcess().Id,
                ProjectPath = editor.ProjectPath,
                UnityVersion = info.UnityVersion,
                PackageVersion = info.PackageVersion,
                ServerSessionId = sessionId,
                State = state,
            });
        }

        /// <summary>A domain reload; where the Editor came back.</summary>
        public async Task<JObject> Reload(int? downtimeMs, bool movePort)
        {
            await lifecycle.WaitAsync();
            try
            {
                var previousPort = Port;
                var previousSession = sessionId;
                if (server == null)
                {
                    throw new InvalidOperationException("the Editor has quit");
                }
                WriteDiscovery("reloading");
                await server.Shutdown("DomainReload");
                lock (gate)
                {
                    foreach (var rule in faults.Where(r => (string)r["on"] == "reload" && (string)r["fault"]["kind"] == "toolsChange").ToList())
                    {
                        foreach (var name in (JArray)rule["fault"]["remove"] ?? new JArray())
                        {
                            removed.Add((string)name);
                        }
                        Fired(rule);
                    }
                }
                await Task.Delay(downtimeMs ?? editor.ReloadDowntimeMs);
                // A moved port: the old one is taken by something else meanwhile.
                System.Net.Sockets.TcpListener holder = null;
                if (movePort)
                {
                    holder = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, previousPort);
                    try
                    {
                        holder.Start();
                    }
                    catch (System.Net.Sockets.SocketException)
                    {
                        holder = null;
                    }
                }
                try
                {
                    StartDomain(movePort ? 0 : previousPort);
                }
                finally
                {
                    if (holder != null)
                    {
                        holder.Stop();
                    }
                }
                var current = server;
                _ = Task.Delay(editor.ToolsReadyDelayMs).ContinueWith(_ => current.NotifyToolsChanged()).Unwrap();
                return new JObject
                {
                    ["port"] = Port,
                    ["sessionId"] = sessionId,
                    ["previousPort"] = previousPort,
                    ["previousSessionId"] = previousSession,
                };
            }
            finally
            {
                lifecycle.Release();
            }
        }

        public async Task Stop()
        {
            await lifecycle.WaitAsync();
            try
            {
                if (server != null)
                {
                    await server.Shutdown("EditorQuit");
                    WriteDiscovery("stopped");
                    server = null;
                }
            }
            finally
            {
                lifecycle.Release();
                Quit.TrySetResult(true);
            }
        }

        /// <summary>Changes settings (the keys of the editor state's "settings"); the settings now.</summary>
        public JObject UpdateSettings(JObject patch)
        {
            var next = new SecuritySettings
            {
                EnableTestsExecution = settings.EnableTestsExecution,
                AllowMenuItemExecution = settings.AllowMenuItemExecution,
                DynamicCodeSecurityLevel = settings.DynamicCodeSecurityLevel,
                AllowThirdPartyTools = settings.AllowThirdPartyTools,
                DisabledTools = settings.DisabledTools.ToList(),
            };
            foreach (var property in patch.Properties())
            {
                switch (property.Name)
                {
                    case "enableTestsExecution":
                        next.EnableTestsExecution = (bool)property.Value;
                        break;
                    case "allowMenuItemExecution":
                        next.AllowMenuItemExecution = (bool)property.Value;
                        break;
                    case "dynamicCodeSecurityLevel":
                        next.DynamicCodeSecurityLevel = (DynamicCodeSecurityLevel)Enum.Parse(typeof(DynamicCodeSecurityLevel), (string)property.Value);
                        break;
                    case "allowThirdPartyTools":
                        next.AllowThirdPartyTools = (bool)property.Value;
                        break;
                    case "disabledTools":
                        next.DisabledTools = ((JArray)property.Value).Select(t => (string)t).ToList();
                        break;
                    default:
                        throw new ArgumentException("unknown setting " + property.Name);
                }
            }
            var toolsChanged = !next.DisabledTools.SequenceEqual(settings.DisabledTools);
            settings = next;
            if (toolsChanged && server != null)
            {
                server.NotifyToolsChanged();
            }
            return SettingsJson();
        }

        public JObject SettingsJson()
        {
            return new JObject
            {
                ["enableTestsExecution"] = settings.EnableTestsExecution,
                ["allowMenuItemExecution"] = settings.AllowMenuItemExecution,
                ["dynamicCodeSecurityLevel"] = settings.DynamicCodeSecurityLevel.ToString(),
                ["allowThirdPartyTools"] = settings.AllowThirdPartyTools,
                ["disabledTools"] = new JArray(settings.DisabledTools.Cast<object>().ToArray()),
            };
        }

        // ---- faults ----

        /// <summary>Adds fault rules (slowTool, toolsChange on reload); their names.</summary>
        public JArray AddFaults(IEnumerable<JObject> rules)
        {
            var names = new JArray();
            lock (gate)
            {
                foreach (var rule in rules)
                {
                    var kind = (string)rule["fault"]?["kind"];
                    if (kind != "slowTool" && !(kind == "toolsChange" && (string)rule["on"] == "reload"))
                    {
                        throw new ArgumentException("the headless host injects only slowTool and toolsChange on reload, not " + (kind ?? "(no kind)"));
                    }
                    var name = (string)rule["name"] ?? "rule-" + (faults.Count + 1);
                    if (faults.Any(f => (string)f["name"] == name))
                    {
                        throw new InvalidOperationException("a fault named " + name + " exists");
                    }
                    var copy = (JObject)rule.DeepClone();
                    copy["name"] = name;
                    faults.Add(copy);
                    names.Add(name);
                }
            }
            return names;
        }

        public bool RemoveFault(string name)
        {
            lock (gate)
            {
                return faults.RemoveAll(f => (string)f["name"] == name) > 0;
            }
        }

        /// <summary>No faults, every tool back (offered again at once).</summary>
        public void Reset()
        {
            lock (gate)
            {
                faults.Clear();
                if (removed.Count == 0)
                {
                    return;
                }
                removed.Clear();
            }
            var current = server;
            if (current != null)
            {
                AddMissingTools();
                current.NotifyToolsChanged();
            }
        }

        /// <summary>Adds the core's tools the registry lacks, but not those a fault removed; each may be slowed by a fault.</summary>
        void AddMissingTools()
        {
            var core = typeof(Dispatcher).Assembly;
            foreach (var tool in ToolRegistry.Discover(new[] { core }, new[] { core }).All)
            {
                bool gone;
                lock (gate)
                {
                    gone = removed.Contains(tool.Info.Name);
                }
                if (!gone && registry.Find(tool.Info.Name) == null)
                {
                    registry.Add(new FaultableTool(tool, this), false);
                }
            }
        }

        public JArray FaultsJson()
        {
            lock (gate)
            {
                return new JArray(faults.Select(f => f.DeepClone()).ToArray());
            }
        }

        /// <summary>Counts a firing; the rule goes when its times are used up.</summary>
        void Fired(JObject rule)
        {
            var times = (int?)rule["times"];
            if (times == null)
            {
                return;
            }
            if (times.Value <= 1)
            {
                faults.Remove(rule);
            }
            else
            {
                rule["times"] = times.Value - 1;
            }
        }

        /// <summary>The extra time a slowTool rule adds to this call (and counts it), or zero.</summary>
        internal int SlowdownFor(string method)
        {
            lock (gate)
            {
                var rule = faults.FirstOrDefault(f => (string)f["fault"]["kind"] == "slowTool"
                    && ((string)f["match"]?["method"] == null || (string)f["match"]["method"] == method));
                if (rule == null)
                {
                    return 0;
                }
                Fired(rule);
                return (int?)rule["fault"]["ms"] ?? 0;
            }
        }

        /// <summary>A tool that may be slowed by a fault rule.</summary>
        sealed class FaultableTool : IUnityTool
        {
            readonly IUnityTool inner;
            readonly HeadlessHost host;

            public FaultableTool(IUnityTool inner, HeadlessHost host)
            {
                this.inner = inner;
                this.host = host;
            }

            public McpToolAttribute Info => inner.Info;

            public JObject ParameterSchema => inner.ParameterSchema;

            public async Task<JObject> Execute(JObject parameters, ToolContext context)
            {
                var extra = host.SlowdownFor(inner.Info.Name);
                if (extra > 0)
                {
                    await Task.Delay(extra, context.Cancellation);
                }
                return await inner.Execute(parameters, context);
            }
        }
    }
}

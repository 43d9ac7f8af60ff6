// The headless host's Editor (§5), run as Unity runs the package: a main
// thread with Unity's synchronization context, ticking (Tests~/Simulation);
// each domain loads there as [InitializeOnLoad] loads McpServerController,
// registering the core's ServerLifecycle on beforeAssemblyReload and
// quitting and starting it from delayCall. A reload is beforeAssemblyReload
// on the main thread, the domain unloaded (posted work lost), downtime, and
// a new domain; a quit is quitting. The resume journal's store and the
// token (made once per host process, published in the discovery file)
// outlive each domain, as SessionState does in Unity. The control API (ControlApi.cs)
// drives it; fault rules a case may add (a slow tool, tools missing after a
// reload, a main thread held) are the only faults it knows.
//
// get-editor-state is answered by the core's link, as in Unity: from the
// domain's main-thread queue, what each update recorded (play mode, a
// reload begun), and the dialog a mainThreadStall shows while it really
// holds the simulated main thread (the host sees no real dialogs, so it
// cannot press one: no press-dialog-button here).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityMcp.Core;
using UnityMcp.Simulation;

namespace UnityMcp.Host
{
    public sealed class HeadlessHost
    {
        readonly ModelEditor editor;
        readonly EditorInfo info;
        readonly SimulatedEditor unity = new SimulatedEditor();
        readonly IJournalStore journalStore = new MemoryJournalStore();
        readonly SemaphoreSlim lifecycleGate = new SemaphoreSlim(1, 1);
        readonly object gate = new object();
        readonly List<JObject> faults = new List<JObject>();
        /// <summary>When a rule with forMs stops being active, by name.</summary>
        readonly Dictionary<string, DateTime> expiry = new Dictionary<string, DateTime>();
        readonly HashSet<string> removed = new HashSet<string>();
        SecuritySettings settings;
        ServerLifecycle lifecycle;
        ToolRegistry registry;

        /// <summary>The domain's main-thread queue (McpServerController.MainThread).</summary>
        MainThreadQueue mainQueue;

        /// <summary>What the domain's main thread last saw (McpServerController.Activity).</summary>
        EditorActivityRecorder activity;

        /// <summary>The domain's PlayMode runs carried from the one before (McpServerController.PlayModeRuns).</summary>
        PlayModeRuns playModeRuns;

        /// <summary>Domain reloads so far.</summary>
        int reloads;

        /// <summary>The dialog a mainThreadStall shows while it holds the main thread.</summary>
        readonly StallDialogs dialogs = new StallDialogs();

        /// <summary>Cancelled by a reset: every stall holding the main thread lets go.</summary>
        CancellationTokenSource stallsReleased = new CancellationTokenSource();

        /// <summary>What SessionState keeps across domains: the port, whether the server ran, the token.</summary>
        int rememberedPort;
        bool wasRunning;
        string sessionToken;

        /// <summary>The token the current domain read (as McpServerController does from SessionState).</summary>
        string token;

        /// <summary>Set when a domain's server publishes "ready".</summary>
        TaskCompletionSource<bool> ready;

        public HeadlessHost(ModelEditor editor)
        {
            this.editor = editor;
            info = editor.EditorInfo(true);
            settings = editor.InitialSettings();
            editor.OnMainThread = () => unity.IsMainThread;
            editor.RequestReload = () => { Reload(null, false).ContinueWith(t => Console.Error.WriteLine(t.Exception), TaskContinuationOptions.OnlyOnFaulted); };
            editor.Reload = () => Reload(null, false);
        }

        /// <summary>Set when the Editor has quit.</summary>
        public readonly TaskCompletionSource<bool> Quit = new TaskCompletionSource<bool>();

        public int Port
        {
            get
            {
                var current = lifecycle;
                return current != null ? current.Port : 0;
            }
        }

        public string Project => editor.ProjectPath;

        public SecuritySettings Settings => settings;

        /// <summary>Domain reloads so far.</summary>
        public int Reloads => Volatile.Read(ref reloads);

        /// <summary>Play mode as the Editor has it now (the host's view: it waits for no main thread).</summary>
        public JObject PlayModeJson() => editor.PlayModeJson();

        public void Start(int port)
        {
            rememberedPort = port;
            LoadDomain().Wait();
        }

        /// <summary>
        /// A domain loads, on the main thread: as McpServerController's static
        /// constructor, its handlers registered and the server started from
        /// delayCall. Completes once the server is ready.
        /// </summary>
        async Task LoadDomain()
        {
            var started = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            ready = started;
            await unity.Invoke(() =>
            {
                editor.ScriptsLoaded();
                // As McpServerController: the tools' Unity work goes through
                // this domain's queue, pumped by update and woken through
                // Unity's synchronization context.
                var queue = new MainThreadQueue();
                queue.BindToCurrentThread();
                var unityContext = SynchronizationContext.Current;
                queue.Wake = () => unityContext.Post(_ => queue.Pump(), null);
                // Each update records what the Editor is doing, then pumps (McpServerController.Update).
                var recorder = new EditorActivityRecorder();
                recorder.Record(false, false, editor.IsPlaying, editor.IsPaused);
                unity.Update += () =>
                {
                    recorder.Record(false, false, editor.IsPlaying, editor.IsPaused);
                    queue.Pump();
                };
                unity.BeforeAssemblyReload += () => recorder.SetReloading(true);
                mainQueue = queue;
                activity = recorder;
                // As PlayModeRunCallbacks registers with the Test Framework
                // when a domain loads.
                playModeRuns = new PlayModeRuns();
                editor.TestRunCallbacks = playModeRuns;
                token = LinkToken.Kept(() => sessionToken, t => sessionToken = t);
                var current = new ServerLifecycle(new HostDomain(this));
                lifecycle = current;
                unity.BeforeAssemblyReload += () => current.BeforeReload();
                unity.Quitting += () => current.Quit();
                var afterReload = wasRunning;
                unity.DelayCall(() =>
                {
                    current.Start(afterReload);
                    if (!current.IsRunning)
                    {
                        started.TrySetException(new InvalidOperationException(current.LastError));
                    }
                });
                return true;
            }).ConfigureAwait(false);
            await started.Task.ConfigureAwait(false);
        }

        /// <summary>A domain reload; where the Editor came back, and what the reload cost the main thread.</summary>
        public async Task<JObject> Reload(int? downtimeMs, bool movePort)
        {
            await lifecycleGate.WaitAsync().ConfigureAwait(false);
            try
            {
                var previousPort = Port;
                var previous = lifecycle;
                if (previous == null || !previous.IsRunning)
                {
                    throw new InvalidOperationException("the Editor has quit");
                }
                var previousSession = previous.SessionId;
                var reload = await unity.ReloadDomain(() => previous.Unload()).ConfigureAwait(false);
                Interlocked.Increment(ref reloads);
                var shutdown = previous.LastShutdown ?? new ShutdownReport();
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
                await Task.Delay(downtimeMs ?? editor.ReloadDowntimeMs).ConfigureAwait(false);
                // A moved port: the old one is taken by something else meanwhile.
                System.Net.Sockets.TcpListener holder = null;
                if (movePort)
                {
                    rememberedPort = 0;
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
                    await LoadDomain().ConfigureAwait(false);
                }
                finally
                {
                    if (holder != null)
                    {
                        holder.Stop();
                    }
                }
                return new JObject
                {
                    ["port"] = Port,
                    ["sessionId"] = lifecycle.SessionId,
                    ["previousPort"] = previousPort,
                    ["previousSessionId"] = previousSession,
                    // What beforeAssemblyReload cost Unity's main thread.
                    ["mainThreadBlockedMs"] = reload.MainThreadBlockedMs,
                    ["mainThreadWorkLost"] = reload.WorkLost,
                    ["clients"] = shutdown.Clients,
                    ["clientsNotified"] = shutdown.Notified,
                };
            }
            finally
            {
                lifecycleGate.Release();
            }
        }

        public async Task Stop()
        {
            await lifecycleGate.WaitAsync().ConfigureAwait(false);
            try
            {
                if (lifecycle != null && lifecycle.IsRunning)
                {
                    await unity.Quit().ConfigureAwait(false);
                }
            }
            finally
            {
                lifecycleGate.Release();
                Quit.TrySetResult(true);
            }
        }

        /// <summary>The host's Editor, as the server's lifecycle needs it.</summary>
        sealed class HostDomain : IEditorDomain
        {
            readonly HeadlessHost host;

            public HostDomain(HeadlessHost host)
            {
                this.host = host;
            }

            public string Project => host.editor.ProjectPath;

            public int PreferredPort => host.rememberedPort;

            public void Remember(int port, bool running)
            {
                host.rememberedPort = port;
                host.wasRunning = running;
            }

            public Dispatcher CreateDispatcher(string serverSessionId)
            {
                host.registry = new ToolRegistry();
                host.AddMissingTools();
                return new Dispatcher(host.registry, new SecurityChecker(() => host.settings), host.info.PackageVersion)
                {
                    Backend = new MainThreadBackend(host.editor, host.mainQueue),
                    Editor = host.info,
                    EditorState = new EditorStateSource(host.mainQueue, host.activity, host.dialogs),
                    Journal = new RequestJournal(host.journalStore),
                    PlayModeRuns = host.playModeRuns,
                    ProjectRoot = host.editor.ProjectPath,
                    ServerSessionId = serverSessionId,
                    Token = host.token,
                };
            }

            public void Publish(string state, int port, string serverSessionId)
            {
                DiscoveryFile.Write(host.editor.ProjectPath, new DiscoveryInfo
                {
                    Port = port,
                    Pid = Process.GetCurrentProcess().Id,
                    ProjectPath = host.editor.ProjectPath,
                    UnityVersion = host.info.UnityVersion,
                    PackageVersion = host.info.PackageVersion,
                    ServerSessionId = serverSessionId,
                    State = state,
                    Token = host.token,
                });
                if (state == "ready" && host.ready != null)
                {
                    host.ready.TrySetResult(true);
                }
            }

            /// <summary>delayCall, once the domain has loaded: the model says how long its tools take to register.</summary>
            public void DelayCall(Action action)
            {
                Task.Delay(host.editor.ToolsReadyDelayMs).ContinueWith(_ => host.unity.DelayCall(action));
            }

            public void LogError(string message)
            {
                Console.Error.WriteLine(message);
            }
        }

        /// <summary>Changes settings (the keys of the editor state's "settings"); the settings now.</summary>
        public JObject UpdateSettings(JObject patch)
        {
            var next = new SecuritySettings
            {
                EnableTestsExecution = settings.EnableTestsExecution,
                AllowMenuItemExecution = settings.AllowMenuItemExecution,
                AllowPressingDialogButtons = settings.AllowPressingDialogButtons,
                DynamicCodeSecurityLevel = settings.DynamicCodeSecurityLevel,
                AllowThirdPartyTools = settings.AllowThirdPartyTools,
                DisabledTools = settings.DisabledTools.ToList(),
                AllowClientsWithoutToken = settings.AllowClientsWithoutToken,
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
                    case "allowPressingDialogButtons":
                        next.AllowPressingDialogButtons = (bool)property.Value;
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
                    case "allowClientsWithoutToken":
                        next.AllowClientsWithoutToken = (bool)property.Value;
                        break;
                    default:
                        throw new ArgumentException("unknown setting " + property.Name);
                }
            }
            var toolsChanged = !next.DisabledTools.SequenceEqual(settings.DisabledTools);
            settings = next;
            if (toolsChanged && lifecycle != null)
            {
                lifecycle.NotifyToolsChanged();
            }
            return SettingsJson();
        }

        public JObject SettingsJson()
        {
            return new JObject
            {
                ["enableTestsExecution"] = settings.EnableTestsExecution,
                ["allowMenuItemExecution"] = settings.AllowMenuItemExecution,
                ["allowPressingDialogButtons"] = settings.AllowPressingDialogButtons,
                ["dynamicCodeSecurityLevel"] = settings.DynamicCodeSecurityLevel.ToString(),
                ["allowThirdPartyTools"] = settings.AllowThirdPartyTools,
                ["disabledTools"] = new JArray(settings.DisabledTools.Cast<object>().ToArray()),
                ["allowClientsWithoutToken"] = settings.AllowClientsWithoutToken,
            };
        }

        // ---- faults ----

        /// <summary>Adds fault rules (slowTool, mainThreadStall, toolsChange on reload); their names.</summary>
        public JArray AddFaults(IEnumerable<JObject> rules)
        {
            var names = new JArray();
            lock (gate)
            {
                foreach (var rule in rules)
                {
                    var kind = (string)rule["fault"]?["kind"];
                    if (kind != "slowTool" && kind != "mainThreadStall" && !(kind == "toolsChange" && (string)rule["on"] == "reload"))
                    {
                        throw new ArgumentException("the headless host injects only slowTool, mainThreadStall and toolsChange on reload, not " + (kind ?? "(no kind)"));
                    }
                    var name = (string)rule["name"] ?? "rule-" + (faults.Count + 1);
                    if (faults.Any(f => (string)f["name"] == name))
                    {
                        throw new InvalidOperationException("a fault named " + name + " exists");
                    }
                    var copy = (JObject)rule.DeepClone();
                    copy["name"] = name;
                    copy["fired"] = 0;
                    var forMs = (int?)rule["forMs"];
                    expiry.Remove(name);
                    if (forMs != null)
                    {
                        expiry[name] = DateTime.UtcNow.AddMilliseconds(forMs.Value);
                    }
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
                expiry.Remove(name);
                return faults.RemoveAll(f => (string)f["name"] == name) > 0;
            }
        }

        /// <summary>No faults (a stall holding the main thread lets go), every tool back (offered again at once).</summary>
        public void Reset()
        {
            lock (gate)
            {
                faults.Clear();
                expiry.Clear();
                stallsReleased.Cancel();
                stallsReleased = new CancellationTokenSource();
                if (removed.Count == 0)
                {
                    return;
                }
                removed.Clear();
            }
            var current = lifecycle;
            if (current != null && current.IsRunning)
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
            rule["fired"] = ((int?)rule["fired"] ?? 0) + 1;
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

        /// <summary>The first rule of this kind that matches the method (counted as fired), or null.</summary>
        JObject FireFor(string kind, string method)
        {
            lock (gate)
            {
                // A rule with forMs is active that long from when it was added, as in fake-unity.
                DateTime until;
                faults.RemoveAll(f => expiry.TryGetValue((string)f["name"], out until) && DateTime.UtcNow >= until);
                var rule = faults.FirstOrDefault(f => (string)f["fault"]["kind"] == kind
                    && ((string)f["match"]?["method"] == null || (string)f["match"]["method"] == method));
                if (rule != null)
                {
                    Fired(rule);
                }
                return rule;
            }
        }

        /// <summary>The slowTool rule that slows this call (counted as fired), or null.</summary>
        internal JObject SlowdownFor(string method)
        {
            return FireFor("slowTool", method);
        }

        /// <summary>
        /// A mainThreadStall for this call (fixtures/scenarios/README.md):
        /// the main thread is held for its ms — really, by work queued on it
        /// ahead of the call's, which sleeps with the rule's modal dialog
        /// shown or an import under way meanwhile. The call then runs as in
        /// Unity: what it asks of the main thread waits behind the stall (and
        /// get-editor-state counts it), what it does not ask is answered.
        /// Nothing when no rule matches; reset lets every stall go.
        /// </summary>
        internal void StallFor(string method)
        {
            var rule = FireFor("mainThreadStall", method);
            if (rule == null)
            {
                return;
            }
            var fault = (JObject)rule["fault"];
            var ms = (int?)fault["ms"] ?? 0;
            var dialog = fault["dialog"] as JObject;
            var importing = (bool?)fault["importing"] ?? false;
            var queue = mainQueue;
            var recorder = activity;
            CancellationToken released;
            lock (gate)
            {
                released = stallsReleased.Token;
            }
            queue.Run(() =>
            {
                if (importing)
                {
                    recorder.Record(false, true, editor.IsPlaying, editor.IsPaused);
                }
                var shown = dialog == null ? null : dialogs.Show((string)dialog["title"] ?? "", ((JArray)dialog["buttons"] ?? new JArray()).Select(b => (string)b));
                try
                {
                    released.WaitHandle.WaitOne(ms);
                }
                finally
                {
                    dialogs.Close(shown);
                    recorder.Record(false, false, editor.IsPlaying, editor.IsPaused);
                }
                return true;
            });
        }

        /// <summary>The dialogs a stall shows, topmost (latest) first; they cannot be pressed.</summary>
        sealed class StallDialogs : IDialogWindows
        {
            readonly object gate = new object();
            readonly List<DialogWindow> shown = new List<DialogWindow>();

            public bool CanPress => false;

            public DialogWindow Show(string title, IEnumerable<string> buttons)
            {
                var dialog = new DialogWindow { Title = title, Buttons = buttons.Select(b => new DialogButton { RawText = b }).ToList() };
                lock (gate)
                {
                    shown.Insert(0, dialog);
                }
                return dialog;
            }

            public void Close(DialogWindow dialog)
            {
                lock (gate)
                {
                    shown.Remove(dialog);
                }
            }

            public List<DialogWindow> Visible()
            {
                lock (gate)
                {
                    return shown.ToList();
                }
            }

            public void Press(DialogWindow dialog, DialogButton button)
            {
                throw new NotSupportedException("the headless host's dialogs cannot be pressed");
            }
        }

        /// <summary>A tool that may be slowed by a fault rule (its result type, so its outputSchema, kept).</summary>
        sealed class FaultableTool : IUnityTool, ITypedResultTool
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

            public Type ResultType => inner is ITypedResultTool ? ((ITypedResultTool)inner).ResultType : null;

            public async Task<JObject> Execute(JObject parameters, ToolContext context)
            {
                host.StallFor(inner.Info.Name);
                var slow = host.SlowdownFor(inner.Info.Name);
                if (slow != null)
                {
                    await WorkFor((int?)slow["fault"]["ms"] ?? 0, (bool?)slow["fault"]["progress"] ?? true, context);
                }
                return await inner.Execute(parameters, context);
            }

            /// <summary>
            /// A slowTool's extra work, before the tool's own: progress every
            /// second unless the rule says it is deadlocked — as fake-unity's
            /// slowTool does (fake-unity/src/serving/effects.rs), so the two
            /// simulated Editors agree (the differential run compares them).
            /// </summary>
            static async Task WorkFor(int ms, bool progress, ToolContext context)
            {
                var until = DateTime.UtcNow.AddMilliseconds(ms);
                for (var tick = 0; ; tick++)
                {
                    var left = until - DateTime.UtcNow;
                    if (left <= TimeSpan.Zero)
                    {
                        return;
                    }
                    if (progress)
                    {
                        context.Progress(tick, null, "Working (" + tick + " s)");
                    }
                    await Task.Delay(left < TimeSpan.FromSeconds(1) ? left : TimeSpan.FromSeconds(1), context.Cancellation);
                }
            }
        }
    }
}

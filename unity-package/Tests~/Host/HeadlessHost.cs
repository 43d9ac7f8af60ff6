// The headless host's Editor (§5), run as Unity runs the package: a main
// thread with Unity's synchronization context, ticking (Tests~/Simulation),
// and the package loaded into an AppDomain of its own for each domain
// (ScriptDomain, as [InitializeOnLoad] loads McpServerController there). A
// reload is beforeAssemblyReload on the main thread, then the domain
// unloaded for real (AppDomain.Unload: its threads aborted, its objects
// finalized, work posted to its main thread lost), downtime, and a new
// domain; a quit is quitting. What Unity keeps across domains lives here,
// outside them (UnityNative is the boundary): the model of the project,
// SessionState (the port, whether the server ran, the token made once per
// host process, the resume journal), the discovery file on disk. The
// control API (ControlApi.cs) drives it; fault rules a case may add (a slow
// tool, tools missing after a reload, a main thread held) are the only
// faults it knows.
//
// get-editor-state is answered by the core's link, as in Unity: from the
// domain's main-thread queue, what each update recorded (play mode, a
// reload begun), and the dialog a mainThreadStall shows while it really
// holds the simulated main thread (the host sees no real dialogs, so it
// cannot press one: no press-dialog-button here).

using System;
using System.Collections.Generic;
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
        readonly UnityNative native;
        readonly SimulatedEditor unity = new SimulatedEditor();
        readonly SemaphoreSlim lifecycleGate = new SemaphoreSlim(1, 1);
        readonly object gate = new object();
        readonly List<JObject> faults = new List<JObject>();
        /// <summary>When a rule with forMs stops being active, by name.</summary>
        readonly Dictionary<string, DateTime> expiry = new Dictionary<string, DateTime>();
        readonly HashSet<string> removed = new HashSet<string>();
        SecuritySettings settings;

        /// <summary>The AppDomain the package runs in now, and the package's domain in it.</summary>
        AppDomain appDomain;
        ScriptDomain domain;

        /// <summary>Domain reloads so far.</summary>
        int reloads;

        /// <summary>The dialog a mainThreadStall shows while it holds the main thread.</summary>
        readonly StallDialogs dialogs = new StallDialogs();

        /// <summary>Cancelled by a reset: every stall holding the main thread lets go.</summary>
        CancellationTokenSource stallsReleased = new CancellationTokenSource();

        /// <summary>Set when a domain's server publishes "ready", or fails to start.</summary>
        TaskCompletionSource<bool> ready;

        public HeadlessHost(ModelEditor editor)
        {
            this.editor = editor;
            info = editor.EditorInfo(true);
            settings = editor.InitialSettings();
            native = new UnityNative(this, editor);
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
                var current = domain;
                try
                {
                    return current != null ? current.Port : 0;
                }
                catch (AppDomainUnloadedException)
                {
                    return 0;
                }
            }
        }

        public string Project => editor.ProjectPath;

        public SecuritySettings Settings => settings;

        public EditorInfo Info => info;

        /// <summary>Domain reloads so far.</summary>
        public int Reloads => Volatile.Read(ref reloads);

        /// <summary>The package's AppDomain now, and how many were unloaded (one per reload).</summary>
        public JObject DomainJson()
        {
            var current = appDomain;
            return new JObject { ["name"] = current != null ? current.FriendlyName : null, ["unloaded"] = Volatile.Read(ref unloaded) };
        }

        int unloaded;

        /// <summary>Play mode as the Editor has it now (the host's view: it waits for no main thread).</summary>
        public JObject PlayModeJson() => editor.PlayModeJson();

        // ---- what SessionState keeps across domains ----

        public int RememberedPort { get; private set; }

        public bool WasRunning { get; private set; }

        public void Remember(int port, bool running)
        {
            RememberedPort = port;
            WasRunning = running;
        }

        /// <summary>The token, made by the first domain, kept for the host process.</summary>
        public string SessionToken { get; set; }

        /// <summary>The resume journal as the last domain wrote it.</summary>
        public string Journal { get; set; }

        public void Published(string state)
        {
            if (state == "ready" && ready != null)
            {
                ready.TrySetResult(true);
            }
        }

        public void StartFailed(string error)
        {
            if (ready != null)
            {
                ready.TrySetException(new InvalidOperationException(error));
            }
        }

        /// <summary>EditorApplication.delayCall on the main thread.</summary>
        public void DelayCall(Action action) => unity.DelayCall(action);

        public void Start(int port)
        {
            RememberedPort = port;
            LoadDomain().Wait();
        }

        /// <summary>
        /// A domain loads: a new AppDomain with the package, loaded on the
        /// main thread, its handlers on the Editor's events, the server
        /// started from delayCall. Completes once the server is ready.
        /// </summary>
        async Task LoadDomain()
        {
            var started = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            ready = started;
            var loading = AppDomain.CreateDomain("Unity scripts " + (Reloads + 1), null, AppDomain.CurrentDomain.SetupInformation);
            var script = (ScriptDomain)loading.CreateInstanceAndUnwrap(typeof(ScriptDomain).Assembly.FullName, typeof(ScriptDomain).FullName);
            await unity.Invoke(() =>
            {
                editor.ScriptsLoaded();
                script.Load(native, editor.ProjectPath);
                unity.Update += script.Update;
                unity.Quitting += script.Quitting;
                return true;
            }).ConfigureAwait(false);
            appDomain = loading;
            domain = script;
            await started.Task.ConfigureAwait(false);
        }

        /// <summary>A domain reload; where the Editor came back, and what the reload cost the main thread.</summary>
        public async Task<JObject> Reload(int? downtimeMs, bool movePort)
        {
            await lifecycleGate.WaitAsync().ConfigureAwait(false);
            try
            {
                var previousPort = Port;
                var previous = domain;
                if (previous == null || previous.Port == 0)
                {
                    throw new InvalidOperationException("the Editor has quit");
                }
                var previousSession = previous.SessionId;
                int[] lost = { 0, 0, 0 };
                var unloading = appDomain;
                unity.BeforeAssemblyReload += () => lost = previous.BeforeAssemblyReload();
                // The domain unloads on the main thread, holding it, as Unity's does.
                var reload = await unity.ReloadDomain(() =>
                {
                    domain = null;
                    AppDomain.Unload(unloading);
                    Interlocked.Increment(ref unloaded);
                    native.DomainUnloaded();
                }).ConfigureAwait(false);
                Interlocked.Increment(ref reloads);
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
                    RememberedPort = 0;
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
                    ["sessionId"] = domain.SessionId,
                    ["previousPort"] = previousPort,
                    ["previousSessionId"] = previousSession,
                    // What beforeAssemblyReload cost Unity's main thread.
                    ["mainThreadBlockedMs"] = reload.MainThreadBlockedMs,
                    ["mainThreadWorkLost"] = reload.WorkLost + lost[2],
                    ["clients"] = lost[0],
                    ["clientsNotified"] = lost[1],
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
                if (domain != null && domain.Port != 0)
                {
                    await unity.Quit().ConfigureAwait(false);
                }
                // The Editor exits: no more ticks, and the domain is unloaded
                // before the process ends (not under a tick of its main thread).
                unity.Dispose();
                var last = appDomain;
                domain = null;
                appDomain = null;
                if (last != null)
                {
                    AppDomain.Unload(last);
                }
            }
            finally
            {
                lifecycleGate.Release();
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
            var current = domain;
            if (toolsChanged && current != null)
            {
                current.ToolsChanged(false);
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
            var current = domain;
            if (current != null)
            {
                current.ToolsChanged(true);
            }
        }

        /// <summary>Whether a fault removed this tool.</summary>
        public bool IsRemoved(string tool)
        {
            lock (gate)
            {
                return removed.Contains(tool);
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
        public JObject FireFor(string kind, string method)
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

        /// <summary>The dialogs a stall shows now.</summary>
        public IDialogWindows Dialogs => dialogs;

        /// <summary>
        /// A mainThreadStall rule holding the calling thread (the main one:
        /// ScriptDomain queues it there): its ms, or until a reset lets every
        /// stall go, with its modal dialog shown meanwhile.
        /// </summary>
        public void Stall(JObject rule)
        {
            var fault = (JObject)rule["fault"];
            var ms = (int?)fault["ms"] ?? 0;
            var dialog = fault["dialog"] as JObject;
            CancellationToken released;
            lock (gate)
            {
                released = stallsReleased.Token;
            }
            var shown = dialog == null ? null : dialogs.Show((string)dialog["title"] ?? "", ((JArray)dialog["buttons"] ?? new JArray()).Select(b => (string)b));
            try
            {
                released.WaitHandle.WaitOne(ms);
            }
            finally
            {
                dialogs.Close(shown);
            }
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
    }
}

// The package's domain in the headless host: created in an AppDomain of its
// own for each domain the Editor loads and unloaded at the reload, as Unity
// does on mono. Here is what McpServerController is in Unity — loaded on
// the main thread ([InitializeOnLoad]), with Unity's synchronization context
// of this domain, the main-thread queue pumped by update, the Test
// Framework's callbacks registered, the server's lifecycle on
// beforeAssemblyReload and quitting and started from delayCall — and the
// package's core with it. Everything the Editor keeps across domains is
// reached through UnityNative, with data only.
//
// So what the package leaves running at a reload (a thread, a socket, a
// listener holding the port, a timer) is there to see as in Unity: the
// unload aborts the domain's threads and finalizes its objects, and the next
// domain finds the port free or not.

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
    public sealed class ScriptDomain : MarshalByRefObject
    {
        UnityNative native;
        string project;
        EditorInfo info;
        string token;
        UnityLikeSynchronizationContext context;
        MainThreadQueue queue;
        EditorActivityRecorder recorder;
        PlayModeRuns playModeRuns;
        HeldJournalStore journal;
        ServerLifecycle lifecycle;
        ToolRegistry registry;

        /// <summary>Lives as long as its domain.</summary>
        public override object InitializeLifetimeService() => null;

        /// <summary>The domain loads, on the main thread (McpServerController's static constructor).</summary>
        public void Load(UnityNative native, string project)
        {
            this.native = native;
            this.project = project;
            // Unity sets its synchronization context on the main thread in each domain it loads.
            context = new UnityLikeSynchronizationContext(Thread.CurrentThread.ManagedThreadId);
            SynchronizationContext.SetSynchronizationContext(context);
            var unityContext = context;
            queue = new MainThreadQueue();
            queue.BindToCurrentThread();
            var pumped = queue;
            queue.Wake = () => unityContext.Post(_ => pumped.Pump(), null);
            recorder = new EditorActivityRecorder();
            recorder.Record(false, false, native.IsPlaying, native.IsPaused);
            // As PlayModeRunCallbacks registers with the Test Framework when a domain loads.
            playModeRuns = new PlayModeRuns();
            native.SetTestRunCallbacks(new TestRunCallbacks(playModeRuns));
            // The journal in SessionState, as McpServerController keeps it (SessionStateJournal).
            var session = native;
            journal = new HeldJournalStore(native.Journal, value => session.Journal = value);
            token = LinkToken.Kept(() => native.SessionToken, t => native.SessionToken = t);
            info = Wire.From<EditorInfo>(native.EditorInfo());
            var current = new ServerLifecycle(new HostDomain(this));
            lifecycle = current;
            var afterReload = native.WasRunning;
            native.DelayCall(new DelayedAction(() =>
            {
                current.Start(afterReload);
                if (!current.IsRunning)
                {
                    native.StartFailed(current.LastError ?? "the server did not start");
                }
            }));
        }

        /// <summary>EditorApplication.update, after this domain's posted work: what the Editor is doing recorded, the queue pumped, SessionState written.</summary>
        public void Update()
        {
            context.ExecuteTasks();
            recorder.Record(false, false, native.IsPlaying, native.IsPaused);
            queue.Pump();
            journal.Flush();
        }

        /// <summary>
        /// beforeAssemblyReload: the server stops and the journal is written;
        /// then what the unload loses: { clients, clients notified, work
        /// posted to the main thread never run }.
        /// </summary>
        public int[] BeforeAssemblyReload()
        {
            recorder.SetReloading(true);
            var shutdown = lifecycle.BeforeReload();
            journal.Flush();
            return new[] { shutdown.Clients, shutdown.Notified, context.Drop() };
        }

        /// <summary>EditorApplication.quitting.</summary>
        public void Quitting()
        {
            lifecycle.Quit();
            journal.Flush();
        }

        public int Port => lifecycle != null ? lifecycle.Port : 0;

        public string SessionId => lifecycle != null ? lifecycle.SessionId : "";

        /// <summary>The settings offer tools differently (or tools a fault removed are back): clients are told.</summary>
        public void ToolsChanged(bool addMissing)
        {
            var current = lifecycle;
            if (current == null || !current.IsRunning)
            {
                return;
            }
            if (addMissing)
            {
                AddMissingTools();
            }
            current.NotifyToolsChanged();
        }

        /// <summary>Adds the core's tools the registry lacks, but not those a fault removed; each may be slowed by a fault.</summary>
        void AddMissingTools()
        {
            var core = typeof(Dispatcher).Assembly;
            foreach (var tool in ToolRegistry.Discover(new[] { core }, new[] { core }).All)
            {
                if (!native.IsRemoved(tool.Info.Name) && registry.Find(tool.Info.Name) == null)
                {
                    registry.Add(new FaultableTool(tool, this), false);
                }
            }
        }

        /// <summary>
        /// A mainThreadStall for this call (fixtures/scenarios/README.md):
        /// the main thread is held for its ms — really, by work queued on it
        /// ahead of the call's, which waits with the rule's modal dialog
        /// shown or an import under way meanwhile. The call then runs as in
        /// Unity: what it asks of the main thread waits behind the stall (and
        /// get-editor-state counts it), what it does not ask is answered.
        /// </summary>
        void StallFor(string method)
        {
            var rule = native.FireFor("mainThreadStall", method);
            if (rule == null)
            {
                return;
            }
            var importing = (bool?)JObject.Parse(rule)["fault"]["importing"] ?? false;
            var stalled = native;
            var activity = recorder;
            queue.Run(() =>
            {
                if (importing)
                {
                    activity.Record(false, true, stalled.IsPlaying, stalled.IsPaused);
                }
                try
                {
                    stalled.Stall(rule);
                }
                finally
                {
                    activity.Record(false, false, stalled.IsPlaying, stalled.IsPaused);
                }
                return true;
            });
        }

        /// <summary>The Editor, as the server's lifecycle needs it.</summary>
        sealed class HostDomain : IEditorDomain
        {
            readonly ScriptDomain domain;

            public HostDomain(ScriptDomain domain)
            {
                this.domain = domain;
            }

            public string Project => domain.project;

            public int PreferredPort => domain.native.RememberedPort;

            public void Remember(int port, bool running) => domain.native.Remember(port, running);

            public Dispatcher CreateDispatcher(string serverSessionId)
            {
                var native = domain.native;
                domain.registry = new ToolRegistry();
                domain.AddMissingTools();
                return new Dispatcher(domain.registry, new SecurityChecker(() => Wire.From<SecuritySettings>(native.Settings())), domain.info.PackageVersion)
                {
                    Backend = new MainThreadBackend(new RemoteEditorBackend(native, domain.project), domain.queue),
                    Editor = domain.info,
                    EditorState = new EditorStateSource(domain.queue, domain.recorder, new RemoteDialogs(native)),
                    Journal = new RequestJournal(domain.journal),
                    PlayModeRuns = domain.playModeRuns,
                    ProjectRoot = domain.project,
                    ServerSessionId = serverSessionId,
                    Token = domain.token,
                };
            }

            public void Publish(string state, int port, string serverSessionId)
            {
                // As McpServerController does: the discovery file and the registry of open Editors.
                DiscoveryFile.Publish(domain.project, new DiscoveryInfo
                {
                    Port = port,
                    Pid = Process.GetCurrentProcess().Id,
                    ProjectPath = domain.project,
                    UnityVersion = domain.info.UnityVersion,
                    PackageVersion = domain.info.PackageVersion,
                    ServerSessionId = serverSessionId,
                    State = state,
                    Token = domain.token,
                }, message => Console.Error.WriteLine(message));
                domain.native.Published(state);
            }

            /// <summary>delayCall, once the domain has loaded: the model says how long its tools take to register.</summary>
            public void DelayCall(Action action)
            {
                var native = domain.native;
                Task.Delay(native.ToolsReadyDelayMs).ContinueWith(_ => native.DelayCall(new DelayedAction(action)));
            }

            public void LogError(string message)
            {
                Console.Error.WriteLine(message);
            }
        }

        /// <summary>Work for delayCall, run on the main thread in this domain.</summary>
        sealed class DelayedAction : MarshalByRefObject, IRemoteAction
        {
            readonly Action action;

            public DelayedAction(Action action)
            {
                this.action = action;
            }

            public override object InitializeLifetimeService() => null;

            public void Run() => action();
        }

        /// <summary>This domain's Test Framework callbacks (PlayModeRunCallbacks), told by the Editor's run.</summary>
        sealed class TestRunCallbacks : MarshalByRefObject, IRemoteTestRun
        {
            readonly PlayModeRuns runs;

            public TestRunCallbacks(PlayModeRuns runs)
            {
                this.runs = runs;
            }

            public override object InitializeLifetimeService() => null;

            public void TestFinished(string fullName) => runs.TestFinished(fullName);

            public void RunFinished(string results) => runs.RunFinished(Wire.From<List<TestResult>>(results));
        }

        /// <summary>The dialogs a stall shows, as the Editor has them; they cannot be pressed.</summary>
        sealed class RemoteDialogs : IDialogWindows
        {
            readonly UnityNative native;

            public RemoteDialogs(UnityNative native)
            {
                this.native = native;
            }

            public bool CanPress => false;

            public List<DialogWindow> Visible() => Wire.From<List<DialogWindow>>(native.VisibleDialogs());

            public void Press(DialogWindow dialog, DialogButton button)
            {
                throw new NotSupportedException("the headless host's dialogs cannot be pressed");
            }
        }

        /// <summary>A tool that may be slowed by a fault rule (its result type, so its outputSchema, kept).</summary>
        sealed class FaultableTool : IUnityTool, ITypedResultTool
        {
            readonly IUnityTool inner;
            readonly ScriptDomain domain;

            public FaultableTool(IUnityTool inner, ScriptDomain domain)
            {
                this.inner = inner;
                this.domain = domain;
            }

            public McpToolAttribute Info => inner.Info;

            public JObject ParameterSchema => inner.ParameterSchema;

            public Type ResultType => inner is ITypedResultTool ? ((ITypedResultTool)inner).ResultType : null;

            public async Task<JObject> Execute(JObject parameters, ToolContext context)
            {
                domain.StallFor(inner.Info.Name);
                var slow = domain.native.FireFor("slowTool", inner.Info.Name);
                if (slow != null)
                {
                    var fault = JObject.Parse(slow)["fault"];
                    await WorkFor((int?)fault["ms"] ?? 0, (bool?)fault["progress"] ?? true, context);
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

// The Editor side of the editor link inside Unity (§5): started when the
// Editor loads this assembly ([InitializeOnLoad]), so after every domain
// reload too. It discovers the tools, starts the core's server on the
// configured port (falling back to the next free one), publishes the
// discovery file (with this Editor process's token, kept in SessionState so
// it outlives domain reloads) and its entry in the per-user registry of open
// Editors (deleted when it quits), sends the shutdown notification before a
// reload or quit, and list_changed once the tools are back after a reload.
// Tool work that touches Unity runs on the main thread through the queue
// pumped by EditorApplication.update. The server's life itself (start,
// reload, quit) is the core's ServerLifecycle, the same the headless host
// runs. Each update also records what the Editor is doing (compiling,
// importing, reloading, play mode) for get-editor-state, which the link
// answers on its socket threads without the main thread; on Windows the
// Editor's dialogs are read from the main thread's windows (its native id
// taken here, on that thread).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using UnityEditor;
using UnityEngine;
using UnityMcp.Core;

namespace UnityMcp.Editor
{
    [InitializeOnLoad]
    public static class McpServerController
    {
        const string WasRunningKey = "UnityMcp.WasRunning";
        const string PortKey = "UnityMcp.Port";
        const string TokenKey = "UnityMcp.Token";

        /// <summary>The package version every result carries as Ver.</summary>
        public const string PackageVersion = "0.1.0";

        static readonly ServerLifecycle lifecycle = new ServerLifecycle(new UnityDomain());
        static HeldJournalStore journalStore;

        /// <summary>
        /// This Editor process's token (extension token): made once, kept in
        /// SessionState across domain reloads, new when Unity starts again.
        /// Published only in the discovery file.
        /// </summary>
        static string token;

        /// <summary>Unity work of the tools, run on the main thread.</summary>
        public static readonly MainThreadQueue MainThread = new MainThreadQueue();

        /// <summary>This domain's PlayMode runs carried from the one before (PlayModeRunCallbacks reports them).</summary>
        public static readonly PlayModeRuns PlayModeRuns = new PlayModeRuns();

        /// <summary>What the Editor was doing when its main thread last ran (get-editor-state), recorded each update.</summary>
        public static readonly EditorActivityRecorder Activity = new EditorActivityRecorder();

        /// <summary>The main thread's dialog windows (Windows; null elsewhere), bound in the static constructor, on that thread.</summary>
        static IDialogWindows dialogs;

        /// <summary>The project folder (absolute, forward slashes).</summary>
        public static string Project => Path.GetDirectoryName(Application.dataPath).Replace('\\', '/');

        public static McpSettings Settings { get; private set; }

        public static bool IsRunning => lifecycle.IsRunning;

        public static int Port => lifecycle.Port;

        public static string SessionId => lifecycle.SessionId;

        /// <summary>The connected clients (for the window).</summary>
        public static List<ClientConnection> Clients => lifecycle.Clients;

        /// <summary>Why the server is not running, when it failed to start.</summary>
        public static string LastError => lifecycle.LastError;

        static McpServerController()
        {
            Settings = McpSettings.Load(Project);
            token = LinkToken.Kept(() => SessionState.GetString(TokenKey, ""), t => SessionState.SetString(TokenKey, t));
            journalStore = SessionStateJournal.Open();
            MainThread.BindToCurrentThread();
            // On the main thread: its native thread id is the one whose windows are the Editor's dialogs.
            dialogs = Win32DialogWindows.OfCurrentThread();
            RecordActivity();
            // An unfocused Editor throttles its loop (about 10 ticks a second,
            // or fewer under macOS App Nap), and a Post to Unity's
            // synchronization context only queues. So work queued from a
            // socket thread also signals a tick (EditorApplication.SignalTick:
            // internal, [ThreadSafe], what Unity's own CallDelayed uses) and
            // the queue is emptied on the internal tick event as well as on
            // update. Both are looked up by name, and absent they are skipped.
            var unity = System.Threading.SynchronizationContext.Current;
            var signalTick = EditorTick.Signal(typeof(EditorApplication));
            MainThread.Wake = () =>
            {
                if (unity != null)
                {
                    unity.Post(_ => MainThread.Pump(), null);
                }
                signalTick();
            };
            EditorTick.OnTick(typeof(EditorApplication), () => MainThread.Pump());
            EditorApplication.update += Update;
            AssemblyReloadEvents.beforeAssemblyReload += BeforeReload;
            AssemblyReloadEvents.afterAssemblyReload += () => Activity.SetReloading(false);
            EditorApplication.quitting += OnQuit;
            // Started after the load completes, so every assembly's tools are there.
            EditorApplication.delayCall += () => Start(SessionState.GetBool(WasRunningKey, false));
        }

        /// <summary>Starts the server (no-op when running); afterReload sends list_changed once ready.</summary>
        public static void Start(bool afterReload) => lifecycle.Start(afterReload);

        /// <summary>Stops the server (clients get the shutdown notification with this reason); it never waits for a client.</summary>
        public static void Stop(string reason) => lifecycle.Stop(reason);

        /// <summary>Applies changed settings; tools offered differently are announced (list_changed).</summary>
        public static void ApplySettings(McpSettings settings)
        {
            var toolsChanged = !settings.Security.DisabledTools.SequenceEqual(Settings.Security.DisabledTools);
            var portChanged = settings.Port != Settings.Port;
            Settings = settings;
            Settings.Save(Project, SessionId);
            if (portChanged)
            {
                SessionState.SetInt(PortKey, settings.Port);
                Stop("EditorQuit");
                Start(false);
            }
            else if (toolsChanged)
            {
                lifecycle.NotifyToolsChanged();
            }
        }

        static void Update()
        {
            RecordActivity();
            MainThread.Pump();
            journalStore.Flush();
        }

        /// <summary>What the Editor is doing now, for get-editor-state (main thread).</summary>
        static void RecordActivity()
        {
            Activity.Record(EditorApplication.isCompiling, EditorApplication.isUpdating, EditorApplication.isPlaying, EditorApplication.isPaused);
        }

        static void BeforeReload()
        {
            // Before the server stops: a get-editor-state answered meanwhile says so.
            Activity.SetReloading(true);
            lifecycle.BeforeReload();
            journalStore.Flush();
        }

        static void OnQuit()
        {
            lifecycle.Quit();
        }

        /// <summary>This Editor, as the server's lifecycle needs it.</summary>
        sealed class UnityDomain : IEditorDomain
        {
            public string Project => McpServerController.Project;

            public int PreferredPort => SessionState.GetInt(PortKey, Settings.Port);

            public void Remember(int port, bool running)
            {
                SessionState.SetInt(PortKey, port);
                SessionState.SetBool(WasRunningKey, running);
            }

            public Dispatcher CreateDispatcher(string serverSessionId)
            {
                var own = new[] { typeof(Dispatcher).Assembly, typeof(McpServerController).Assembly };
                var registry = ToolRegistry.Discover(AppDomain.CurrentDomain.GetAssemblies(), own);
                var backend = new UnityEditorBackend(MainThread);
                return new Dispatcher(registry, new SecurityChecker(() => Settings.Security), PackageVersion)
                {
                    Backend = backend,
                    Editor = backend.Info(),
                    EditorState = new EditorStateSource(MainThread, Activity, dialogs),
                    Journal = new RequestJournal(journalStore),
                    PlayModeRuns = PlayModeRuns,
                    ProjectRoot = McpServerController.Project,
                    ServerSessionId = serverSessionId,
                    Token = token,
                };
            }

            public void Publish(string state, int port, string serverSessionId)
            {
                if (state == "ready")
                {
                    Settings.Save(McpServerController.Project, serverSessionId);
                }
                try
                {
                    // The discovery file, and this Editor's entry in the per-user registry of open Editors (a failure there is only warned of).
                    DiscoveryFile.Publish(McpServerController.Project, new DiscoveryInfo
                    {
                        Port = port,
                        Pid = Process.GetCurrentProcess().Id,
                        ProjectPath = McpServerController.Project,
                        UnityVersion = Application.unityVersion,
                        PackageVersion = PackageVersion,
                        ServerSessionId = serverSessionId,
                        State = state,
                        Token = token,
                    }, message => UnityEngine.Debug.LogWarning(message));
                }
                catch (Exception e)
                {
                    UnityEngine.Debug.LogWarning("Unity MCP: cannot write the discovery file: " + e.Message);
                }
            }

            public void DelayCall(Action action)
            {
                EditorApplication.delayCall += () => action();
            }

            public void LogError(string message)
            {
                UnityEngine.Debug.LogError(message);
            }
        }
    }

    /// <summary>
    /// The batch-mode entry point for CI:
    /// <c>Unity -batchmode -projectPath P -executeMethod UnityMcp.Editor.BatchMode.Start</c>
    /// (without -quit). It starts the server and returns at once; the Editor
    /// keeps running, and the discovery file says when it is ready.
    /// </summary>
    public static class BatchMode
    {
        public static void Start()
        {
            McpServerController.Start(false);
            UnityEngine.Debug.Log("Unity MCP: listening on 127.0.0.1:" + McpServerController.Port + " (" + (McpServerController.LastError ?? "ready") + ")");
        }
    }
}

// The Editor's side of the domain boundary, as Unity's native side is: what
// outlives every AppDomain the headless host loads the package into — the
// model of the project (console, scenes, play mode, compiles, tests), what
// SessionState keeps (the port, whether the server ran, the token, the
// resume journal), the main thread's dialogs and the host's fault rules.
//
// It lives in the host's first domain; the package's domain (ScriptDomain)
// reaches it by remoting, with data only: JSON text, numbers, and callbacks
// that are objects of the package's domain. So nothing of a domain is kept
// here when it unloads (a callback into an unloaded domain throws, and is
// dropped), as nothing managed survives Unity's unload.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    /// <summary>Data across the domain boundary: JSON text, as nothing else of a domain may outlive it.</summary>
    public static class Wire
    {
        static readonly JsonSerializerSettings Settings = new JsonSerializerSettings
        {
            // A field's initial list is replaced, never appended to.
            ObjectCreationHandling = ObjectCreationHandling.Replace,
            DateParseHandling = DateParseHandling.None,
        };

        public static string To(object value) => JsonConvert.SerializeObject(value, Settings);

        public static T From<T>(string json) => json == null ? default(T) : JsonConvert.DeserializeObject<T>(json, Settings);
    }

    /// <summary>A call of the package's domain that finishes later (a compile, a test run): told how it goes.</summary>
    public interface IRemoteCall
    {
        void Progress(double progress, double? total, string message);

        /// <summary>A compile's report the moment it finished, before any reload (JSON).</summary>
        void Finished(string report);

        /// <summary>The call's result (JSON).</summary>
        void Completed(string result);

        /// <summary>The call failed: the exception (serialized by remoting), or cancelled when null.</summary>
        void Failed(Exception error);
    }

    /// <summary>The callbacks a domain registered with the Test Framework, across the boundary.</summary>
    public interface IRemoteTestRun
    {
        void TestFinished(string fullName);

        /// <summary>The run's results, in run order (JSON).</summary>
        void RunFinished(string results);
    }

    /// <summary>Work the package's domain asks to run on the main thread (EditorApplication.delayCall).</summary>
    public interface IRemoteAction
    {
        void Run();
    }

    public sealed class UnityNative : MarshalByRefObject
    {
        readonly HeadlessHost host;
        readonly ModelEditor editor;
        readonly object gate = new object();

        /// <summary>The current domain's calls still going, so its unload ends them here too.</summary>
        readonly Dictionary<int, CancellationTokenSource> calls = new Dictionary<int, CancellationTokenSource>();
        int nextCall;

        public UnityNative(HeadlessHost host, ModelEditor editor)
        {
            this.host = host;
            this.editor = editor;
        }

        /// <summary>Lives as long as the host (remoting's lease would end it after minutes idle).</summary>
        public override object InitializeLifetimeService() => null;

        // ---- SessionState, as the host keeps it ----

        public int RememberedPort => host.RememberedPort;

        public bool WasRunning => host.WasRunning;

        public void Remember(int port, bool running) => host.Remember(port, running);

        public string SessionToken
        {
            get { return host.SessionToken; }
            set { host.SessionToken = value; }
        }

        /// <summary>The resume journal (SessionState "UnityMcp.Journal").</summary>
        public string Journal
        {
            get { return host.Journal; }
            set { host.Journal = value; }
        }

        public string Settings() => Wire.To(host.Settings);

        public string EditorInfo() => Wire.To(host.Info);

        public int ToolsReadyDelayMs => editor.ToolsReadyDelayMs;

        public void Published(string state) => host.Published(state);

        public void StartFailed(string error) => host.StartFailed(error);

        public void DelayCall(IRemoteAction action) => host.DelayCall(() => Safely(action.Run));

        // ---- the host's faults ----

        /// <summary>The first rule of this kind matching the method, counted as fired (JSON), or null.</summary>
        public string FireFor(string kind, string method)
        {
            var rule = host.FireFor(kind, method);
            return rule == null ? null : rule.ToString(Formatting.None);
        }

        public bool IsRemoved(string tool) => host.IsRemoved(tool);

        /// <summary>Holds the calling (main) thread as a mainThreadStall rule says, its dialog shown meanwhile.</summary>
        public void Stall(string rule) => host.Stall(Newtonsoft.Json.Linq.JObject.Parse(rule));

        public string VisibleDialogs() => Wire.To(host.Dialogs.Visible());

        // ---- the project's model (Unity's APIs) ----

        public void ScriptsLoaded() => editor.ScriptsLoaded();

        public void SetTestRunCallbacks(IRemoteTestRun callbacks) => editor.TestRunCallbacks = new RemoteTestRun(callbacks);

        public string[] SnippetReferences => editor.SnippetReferences.ToArray();

        public void MainThreadOnly(string api) => editor.MainThreadOnly(api);

        public string ReadConsole() => Wire.To(editor.ReadConsole());

        public string ClearConsole() => Wire.To(editor.ClearConsole());

        public void Log(string entry) => editor.Log(Wire.From<LogEntry>(entry));

        public string SceneName => editor.SceneName;

        public string SceneRoots() => Wire.To(editor.SceneRoots());

        public bool IsPlaying => editor.IsPlaying;

        public bool IsPaused => editor.IsPaused;

        public string ApplyPlayAction(int action) => editor.ApplyPlayAction((PlayAction)action);

        public bool EnteringPlayModeReloadsDomain => editor.EnteringPlayModeReloadsDomain;

        public string MenuItems() => Wire.To(editor.MenuItems());

        public string ExecuteMenuItem(string path, bool useReflectionFallback) => Wire.To(editor.ExecuteMenuItem(path, useReflectionFallback));

        public string SearchProviders() => Wire.To(editor.SearchProviders());

        public string Search(string query, string providers, bool includePackages) => Wire.To(editor.Search(query, Wire.From<List<SearchProviderInfo>>(providers), includePackages));

        public string FocusWindow() => editor.FocusWindow();

        public string Windows() => Wire.To(editor.Windows());

        public string CaptureWindow(string window, double scale) => Wire.To(editor.CaptureWindow(window, scale));

        /// <summary>Starts a compile (on the main thread); its number, for <see cref="Cancel"/>.</summary>
        public int Compile(bool force, IRemoteCall call)
        {
            return Start(call, context => editor.Compile(force, context, report => Safely(() => call.Finished(Wire.To(report)))));
        }

        /// <summary>Starts a test run (on the main thread); its number, for <see cref="Cancel"/>.</summary>
        public int RunTests(string selection, IRemoteCall call)
        {
            return Start(call, context => editor.RunTests(Wire.From<TestSelection>(selection), context));
        }

        /// <summary>The caller's token was cancelled (its request timed out, its client went).</summary>
        public void Cancel(int call)
        {
            CancellationTokenSource cancel;
            lock (gate)
            {
                calls.TryGetValue(call, out cancel);
            }
            if (cancel != null)
            {
                cancel.Cancel();
            }
        }

        /// <summary>The domain unloaded: its calls' tasks die with it, here too.</summary>
        public void DomainUnloaded()
        {
            List<CancellationTokenSource> going;
            lock (gate)
            {
                going = calls.Values.ToList();
                calls.Clear();
            }
            foreach (var cancel in going)
            {
                cancel.Cancel();
            }
        }

        int Start<T>(IRemoteCall call, Func<ToolContext, Task<T>> body)
        {
            var cancel = new CancellationTokenSource();
            int id;
            lock (gate)
            {
                id = ++nextCall;
                calls[id] = cancel;
            }
            var context = new ToolContext
            {
                Cancellation = cancel.Token,
                Progress = (progress, total, message) => Safely(() => call.Progress(progress, total, message)),
            };
            Task<T> running;
            try
            {
                running = body(context);
            }
            catch
            {
                Forget(id);
                throw;
            }
            running.ContinueWith(t =>
            {
                Forget(id);
                if (t.IsCanceled)
                {
                    Safely(() => call.Failed(null));
                }
                else if (t.IsFaulted)
                {
                    Safely(() => call.Failed(t.Exception.GetBaseException()));
                }
                else
                {
                    Safely(() => call.Completed(Wire.To(t.Result)));
                }
            }, TaskContinuationOptions.ExecuteSynchronously);
            return id;
        }

        void Forget(int id)
        {
            lock (gate)
            {
                calls.Remove(id);
            }
        }

        /// <summary>A call into a domain that may have unloaded meanwhile: nobody is there to tell.</summary>
        static void Safely(Action tell)
        {
            try
            {
                tell();
            }
            catch (AppDomainUnloadedException)
            {
            }
            catch (System.Runtime.Remoting.RemotingException)
            {
            }
        }

        /// <summary>The model's Test Framework telling the callbacks of the package's current domain.</summary>
        sealed class RemoteTestRun : ITestRunCallbacks
        {
            readonly IRemoteTestRun remote;

            public RemoteTestRun(IRemoteTestRun remote)
            {
                this.remote = remote;
            }

            public void TestFinished(string fullName) => Safely(() => remote.TestFinished(fullName));

            public void RunFinished(List<TestResult> results) => Safely(() => remote.RunFinished(Wire.To(results)));
        }
    }
}

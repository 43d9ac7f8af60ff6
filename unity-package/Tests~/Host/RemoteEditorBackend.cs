// Unity's APIs as the package's domain reaches them in the headless host:
// the model Editor lives outside the domain (UnityNative), so each call
// crosses the boundary with data only, on the thread that made it (the
// main thread, as MainThreadBackend in front of this makes sure). Snippets
// of execute-dynamic-code are compiled and loaded here, in the package's
// domain, as Unity loads them into the domain that runs them.

using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public sealed class RemoteEditorBackend : IEditorBackend
    {
        readonly UnityNative native;

        public RemoteEditorBackend(UnityNative native, string project)
        {
            this.native = native;
            ProjectPath = project;
        }

        public string ProjectPath { get; }

        public List<LogEntry> ReadConsole() => Wire.From<List<LogEntry>>(native.ReadConsole());

        public List<LogEntry> ClearConsole() => Wire.From<List<LogEntry>>(native.ClearConsole());

        public void Log(LogEntry entry) => native.Log(Wire.To(entry));

        public string SceneName => native.SceneName;

        public List<SceneObject> SceneRoots() => Wire.From<List<SceneObject>>(native.SceneRoots());

        public bool IsPlaying => native.IsPlaying;

        public bool IsPaused => native.IsPaused;

        public string ApplyPlayAction(PlayAction action) => native.ApplyPlayAction((int)action);

        public bool EnteringPlayModeReloadsDomain => native.EnteringPlayModeReloadsDomain;

        public async Task<CompileReport> Compile(bool force, ToolContext context, Action<CompileReport> finished)
        {
            var call = new RemoteCall(context, report => finished(Wire.From<CompileReport>(report)));
            return Wire.From<CompileReport>(await call.Run(() => native.Compile(force, call), native));
        }

        public async Task<List<TestResult>> RunTests(TestSelection selection, ToolContext context)
        {
            var call = new RemoteCall(context, null);
            return Wire.From<List<TestResult>>(await call.Run(() => native.RunTests(Wire.To(selection), call), native));
        }

        public List<MenuItemInfo> MenuItems() => Wire.From<List<MenuItemInfo>>(native.MenuItems());

        public MenuExecution ExecuteMenuItem(string path, bool useReflectionFallback) => Wire.From<MenuExecution>(native.ExecuteMenuItem(path, useReflectionFallback));

        public List<SearchProviderInfo> SearchProviders() => Wire.From<List<SearchProviderInfo>>(native.SearchProviders());

        public List<SearchItem> Search(string query, List<SearchProviderInfo> providers, bool includePackages) =>
            Wire.From<List<SearchItem>>(native.Search(query, Wire.To(providers), includePackages));

        public string FocusWindow() => native.FocusWindow();

        public List<string> Windows() => Wire.From<List<string>>(native.Windows());

        public Capture CaptureWindow(string window, double scale) => Wire.From<Capture>(native.CaptureWindow(window, scale));

        public CodeDomRunner SnippetRunner()
        {
            var editor = native;
            return ModelEditor.SnippetRunnerLogging(entry => editor.Log(Wire.To(entry)), editor.SnippetReferences);
        }

        public Task<CodeRun> ExecuteSnippet(PreparedSnippet snippet, JObject parameters, SnippetLimits limits, DateTime deadline)
        {
            native.MainThreadOnly("the dynamic code's execution");
            return Task.FromResult(SnippetRunner().Execute(snippet, parameters, limits, deadline));
        }

        /// <summary>A call the Editor finishes later, told here how it goes: its progress, its end.</summary>
        sealed class RemoteCall : MarshalByRefObject, IRemoteCall
        {
            readonly ToolContext context;
            readonly Action<string> finished;
            readonly TaskCompletionSource<string> result = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);

            public RemoteCall(ToolContext context, Action<string> finished)
            {
                this.context = context;
                this.finished = finished;
            }

            public override object InitializeLifetimeService() => null;

            /// <summary>Starts the call (its number from <paramref name="start"/>); cancelled there when the tool's token is.</summary>
            public async Task<string> Run(Func<int> start, UnityNative native)
            {
                var id = start();
                using (context.Cancellation.Register(() => native.Cancel(id)))
                {
                    return await result.Task;
                }
            }

            public void Progress(double progress, double? total, string message) => context.Progress(progress, total, message);

            public void Finished(string report)
            {
                if (finished != null)
                {
                    finished(report);
                }
            }

            public void Completed(string value) => result.TrySetResult(value);

            public void Failed(Exception error)
            {
                if (error == null)
                {
                    result.TrySetCanceled();
                }
                else
                {
                    result.TrySetException(error);
                }
            }
        }
    }
}

// The model Editor reached as Unity's is: every call goes through the core's
// MainThreadQueue and runs on the simulated main thread at its next tick, as
// UnityEditorBackend's OnMain runs Unity's APIs; the model refuses a call
// made anywhere else, as Unity throws "can only be called from the main
// thread". So a tool that reached Unity off the main thread, or a path
// that waits on the main thread from it, fails here as it would in Unity.

using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public sealed class MainThreadBackend : IEditorBackend
    {
        readonly IEditorBackend inner;
        readonly MainThreadQueue main;

        public MainThreadBackend(IEditorBackend inner, MainThreadQueue main)
        {
            this.inner = inner;
            this.main = main;
        }

        T OnMain<T>(Func<T> body) => main.Run(body).GetAwaiter().GetResult();

        void OnMain(Action body) => main.Run(() => { body(); return true; }).GetAwaiter().GetResult();

        public string ProjectPath => inner.ProjectPath;

        public List<LogEntry> ReadConsole() => OnMain(() => inner.ReadConsole());

        public List<LogEntry> ClearConsole() => OnMain(() => inner.ClearConsole());

        public void Log(LogEntry entry) => OnMain(() => inner.Log(entry));

        public string SceneName => OnMain(() => inner.SceneName);

        public List<SceneObject> SceneRoots() => OnMain(() => inner.SceneRoots());

        public bool IsPlaying => OnMain(() => inner.IsPlaying);

        public bool IsPaused => OnMain(() => inner.IsPaused);

        public string ApplyPlayAction(PlayAction action) => OnMain(() => inner.ApplyPlayAction(action));

        public bool EnteringPlayModeReloadsDomain => OnMain(() => inner.EnteringPlayModeReloadsDomain);

        // Started on the main thread; what it awaits resumes there, as
        // Unity's compilation callbacks do.
        public Task<CompileReport> Compile(bool force, ToolContext context, Action<CompileReport> finished) => OnMain(() => inner.Compile(force, context, finished));

        public Task<List<TestResult>> RunTests(TestSelection selection, ToolContext context) => OnMain(() => inner.RunTests(selection, context));

        public List<MenuItemInfo> MenuItems() => OnMain(() => inner.MenuItems());

        public MenuExecution ExecuteMenuItem(string path, bool useReflectionFallback) => OnMain(() => inner.ExecuteMenuItem(path, useReflectionFallback));

        public List<SearchProviderInfo> SearchProviders() => OnMain(() => inner.SearchProviders());

        public List<SearchItem> Search(string query, List<SearchProviderInfo> providers, bool includePackages) => OnMain(() => inner.Search(query, providers, includePackages));

        public string FocusWindow() => OnMain(() => inner.FocusWindow());

        public List<string> Windows() => OnMain(() => inner.Windows());

        public Capture CaptureWindow(string window, double scale) => OnMain(() => inner.CaptureWindow(window, scale));

        public CodeDomRunner SnippetRunner() => inner.SnippetRunner();

        // Awaited, never waited on: the call's deadline is answered while a snippet holds the main thread.
        public Task<CodeRun> ExecuteSnippet(PreparedSnippet snippet, JObject parameters, SnippetLimits limits, DateTime deadline) =>
            main.Run(() => inner.ExecuteSnippet(snippet, parameters, limits, deadline)).Unwrap();
    }
}

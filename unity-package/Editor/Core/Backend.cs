// What the tools of §6 need from an Editor, as plain data. The tool bodies
// (parameters, filters, limits, result shapes) live in the core and are the
// same everywhere; an IEditorBackend answers them: the Editor layer with
// Unity's APIs, the headless host (Tests~/Host) with a model of the project
// read from a fixture editor state.

using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>One console entry: Type is Error, Warning or Log.</summary>
    public sealed class LogEntry
    {
        public string Type = "Log";
        public string Message = "";
        public string StackTrace = "";
    }

    /// <summary>A component of a GameObject with its serialized properties.</summary>
    public sealed class SceneComponent
    {
        public string TypeName = "";
        public string Namespace = "";
        public string Assembly = "";
        public JObject Properties = new JObject();

        /// <summary>What IncludeInheritedProperties adds (Behaviour, Object members).</summary>
        public JObject InheritedProperties = new JObject();

        /// <summary>Does the component have Behaviour.enabled?</summary>
        public bool HasEnabled;

        /// <summary>Type.AssemblyQualifiedName as .NET writes it.</summary>
        public string AssemblyQualifiedName
        {
            get
            {
                var full = Namespace.Length == 0 ? TypeName : Namespace + "." + TypeName;
                return full + ", " + Assembly + ", Version=0.0.0.0, Culture=neutral, PublicKeyToken=null";
            }
        }
    }

    /// <summary>How a SceneObject's identity is set from what Unity names it by.</summary>
    public static class ObjectIdentity
    {
        /// <summary>From a 64-bit EntityId (EntityId.ToULong, Unity 6000.5 and newer).</summary>
        public static void FromEntityId(SceneObject o, ulong entityId)
        {
            o.InstanceId = unchecked((int)(uint)entityId);
            o.EntityId = entityId.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }

        /// <summary>From an instance ID (before 6000.5, where an EntityId holds an int).</summary>
        public static void FromInstanceId(SceneObject o, int instanceId)
        {
            o.InstanceId = instanceId;
            o.EntityId = instanceId.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }
    }

    /// <summary>A GameObject of the open scene.</summary>
    public sealed class SceneObject
    {
        public string Name = "";

        /// <summary>
        /// Unity's instance ID (GetInstanceID): uLoopMCP 2.1.1's <c>id</c>. From
        /// Unity 6000.5, where an object is named by a 64-bit EntityId, its low
        /// 32 bits, as Unity's own (obsolete) GetInstanceID returns them.
        /// </summary>
        public long InstanceId;

        /// <summary>
        /// The object's identity, exact, in decimal (a string: JavaScript
        /// clients round a JSON number past 2^53): the EntityId from Unity
        /// 6000.5, the instance ID before (docs/editor-link-protocol.md §6).
        /// </summary>
        public string EntityId = "";
        public string Tag = "Untagged";
        public int Layer;

        /// <summary>activeSelf.</summary>
        public bool Active = true;

        public List<SceneComponent> Components = new List<SceneComponent>();
        public List<SceneObject> Children = new List<SceneObject>();
    }

    /// <summary>A compiler message.</summary>
    public sealed class Diagnostic
    {
        public bool IsError;
        public string File = "";
        public int Line;
        public int Column;
        public string Code = "";
        public string Text = "";

        /// <summary>The line Unity's console shows: File(line,col): error CS0000: text.</summary>
        public string UnityMessage => File + "(" + Line + "," + Column + "): " + (IsError ? "error " : "warning ") + Code + ": " + Text;
    }

    /// <summary>What a compile found.</summary>
    public sealed class CompileReport
    {
        public List<Diagnostic> Diagnostics = new List<Diagnostic>();

        /// <summary>The domain reloads before an answer can be sent (new assemblies).</summary>
        public bool ReloadFollows;
    }

    public enum TestOutcome
    {
        Passed,
        Failed,
        Skipped,
    }

    /// <summary>One test's result.</summary>
    public sealed class TestResult
    {
        public string FullName = "";
        public string Assembly = "";
        public TestOutcome Outcome;
        public long DurationMs;
        public string Message = "";
        public string StackTrace = "";
    }

    /// <summary>Which tests run-tests runs.</summary>
    public sealed class TestSelection
    {
        public TestMode Mode;
        public TestFilterType FilterType;
        public string FilterValue = "";
    }

    /// <summary>A [MenuItem] method.</summary>
    public sealed class MenuItemInfo
    {
        public string Path = "";
        public string MethodName = "";
        public string TypeName = "";
        public string AssemblyName = "";
        public long Priority;
        public bool IsValidateFunction;
    }

    /// <summary>What executing a menu item did.</summary>
    public sealed class MenuExecution
    {
        public bool Found;
        public bool Success;

        /// <summary>EditorApplication or Reflection; empty when it did not run.</summary>
        public string Method = "";

        public string Error = "";
        public string Details = "";
    }

    /// <summary>A Unity Search provider.</summary>
    public sealed class SearchProviderInfo
    {
        public string Id = "";
        public string DisplayName = "";
        public string Description = "";
        public long Priority;
        public bool IsActive;
        public string FilterId = "";
    }

    /// <summary>One Unity Search result.</summary>
    public sealed class SearchItem
    {
        public string Id = "";
        public string Label = "";
        public string Description = "";
        public string Provider = "";
        public string Type = "";
        public string Path = "";

        /// <summary>Lower case, no dot; empty for folders and non-files.</summary>
        public string Extension = "";

        public long Score;
        public long? FileSize;
        public string LastModified;
    }

    /// <summary>A captured window.</summary>
    public sealed class Capture
    {
        public int Width;
        public int Height;
        public byte[] Png;
    }

    /// <summary>A dynamic-code compiler message.</summary>
    public sealed class CodeError
    {
        public string Message = "";
        public int Line;
        public int Column;
        public string ErrorCode = "";
    }

    /// <summary>What running dynamic code produced.</summary>
    public sealed class CodeRun
    {
        public bool Success;
        public string Result = "";
        public List<string> Logs = new List<string>();
        public List<CodeError> Errors = new List<CodeError>();
        public string ErrorMessage = "";

        /// <summary>Why its budgets stopped it, when they did (ErrorMessage says so in words).</summary>
        public SnippetStop? Stopped;
    }

    /// <summary>The Editor the tools work on.</summary>
    public interface IEditorBackend
    {
        /// <summary>The project folder (absolute, forward slashes).</summary>
        string ProjectPath { get; }

        // ---- console ----

        /// <summary>The console, oldest first.</summary>
        List<LogEntry> ReadConsole();

        /// <summary>Empties the console; what it held.</summary>
        List<LogEntry> ClearConsole();

        void Log(LogEntry entry);

        // ---- scene and play mode ----

        string SceneName { get; }

        List<SceneObject> SceneRoots();

        bool IsPlaying { get; }

        bool IsPaused { get; }

        /// <summary>Applies a play-mode action; the message saying what happened.</summary>
        string ApplyPlayAction(PlayAction action);

        /// <summary>
        /// Whether entering play mode reloads the domain now, as the
        /// project's Enter Play Mode settings say (Unity's default: it
        /// does). A PlayMode test run then goes on in the next domain.
        /// </summary>
        bool EnteringPlayModeReloadsDomain { get; }

        // ---- scripts and tests ----

        /// <summary>
        /// Refreshes and compiles. <paramref name="finished"/> is called the
        /// moment compilation finishes, before any domain reload, so the result
        /// can be journaled for x-resume.
        /// </summary>
        Task<CompileReport> Compile(bool force, ToolContext context, System.Action<CompileReport> finished);

        /// <summary>Runs the selected tests (reporting progress); their results in run order.</summary>
        Task<List<TestResult>> RunTests(TestSelection selection, ToolContext context);

        // ---- menus ----

        /// <summary>Every listed menu item (validate functions included).</summary>
        List<MenuItemInfo> MenuItems();

        MenuExecution ExecuteMenuItem(string path, bool useReflectionFallback);

        // ---- search ----

        List<SearchProviderInfo> SearchProviders();

        /// <summary>
        /// Runs a Unity Search query with these providers (in priority order);
        /// each provider's items best first. An unsupported query throws
        /// <see cref="System.ArgumentException"/> with the reason.
        /// </summary>
        List<SearchItem> Search(string query, List<SearchProviderInfo> providers, bool includePackages);

        // ---- windows ----

        /// <summary>Brings the Editor to the front; the message, or throws with the reason.</summary>
        string FocusWindow();

        /// <summary>Open windows that can be captured.</summary>
        List<string> Windows();

        /// <summary>Captures a window (its name as in <see cref="Windows"/>) as a PNG.</summary>
        Capture CaptureWindow(string window, double scale);

        // ---- dynamic code ----

        /// <summary>How this Editor compiles snippets (its references, its preamble); any thread.</summary>
        CodeDomRunner SnippetRunner();

        /// <summary>
        /// Runs a prepared snippet on the main thread within its budgets
        /// (awaited: the call's deadline is answered even while it runs).
        /// </summary>
        Task<CodeRun> ExecuteSnippet(PreparedSnippet snippet, JObject parameters, SnippetLimits limits, DateTime deadline);
    }
}

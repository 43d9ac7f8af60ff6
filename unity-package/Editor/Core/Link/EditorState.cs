// get-editor-state (§6, extension editor-state): whether the Editor's main
// thread is running, answered by the link on the socket thread, never
// queued for the main thread (which a modal dialog, a long import or a
// script in an endless loop can hold for minutes). What it says comes from
// three places, none of which needs the main thread to answer:
//
// - the main-thread queue (MainThreadQueue.Report): when the main thread
//   last came to it, what waits for it and for how long;
// - what the Editor was doing when its main thread last ran, recorded by
//   the Editor layer on each tick (IEditorActivity: Unity's
//   EditorApplication.isCompiling, isUpdating, a reload begun, play mode);
// - the modal dialog the Editor shows, where the platform lets the package
//   see one (ModalDialogs, DialogWindows.cs).

using System.Collections.Generic;
using System.Linq;
using System.Threading;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>What the Editor was doing when its main thread last ran (immutable).</summary>
    public sealed class EditorActivity
    {
        /// <summary>Play mode as get-editor-state names it.</summary>
        public const string Edit = "edit";
        public const string Playing = "playing";
        public const string Paused = "paused";

        /// <summary>Nothing seen yet: an Editor in edit mode doing nothing.</summary>
        public static readonly EditorActivity Idle = new EditorActivity(false, false, false, Edit);

        public EditorActivity(bool compiling, bool importing, bool reloading, string playMode)
        {
            Compiling = compiling;
            Importing = importing;
            Reloading = reloading;
            PlayMode = playMode;
        }

        /// <summary>EditorApplication.isCompiling.</summary>
        public bool Compiling { get; }

        /// <summary>EditorApplication.isUpdating (an asset import).</summary>
        public bool Importing { get; }

        /// <summary>A domain reload has begun (beforeAssemblyReload) and not ended.</summary>
        public bool Reloading { get; }

        /// <summary><see cref="Edit"/>, <see cref="Playing"/> or <see cref="Paused"/>.</summary>
        public string PlayMode { get; }

        /// <summary>The play mode of EditorApplication.isPlaying and isPaused (paused counts only while playing).</summary>
        public static string PlayModeOf(bool isPlaying, bool isPaused) => !isPlaying ? Edit : isPaused ? Paused : Playing;
    }

    /// <summary>What the Editor was doing when its main thread last ran; read from any thread.</summary>
    public interface IEditorActivity
    {
        EditorActivity Last { get; }
    }

    /// <summary>
    /// Written on the main thread (each tick, and when a reload begins),
    /// read from socket threads: the latest snapshot, swapped whole.
    /// </summary>
    public sealed class EditorActivityRecorder : IEditorActivity
    {
        EditorActivity last = EditorActivity.Idle;
        int reloading;

        public EditorActivity Last => Volatile.Read(ref last);

        /// <summary>A tick: what the Editor says it is doing now (the reload flag is kept).</summary>
        public void Record(bool compiling, bool importing, bool isPlaying, bool isPaused)
        {
            Volatile.Write(ref last, new EditorActivity(compiling, importing, Volatile.Read(ref reloading) != 0, EditorActivity.PlayModeOf(isPlaying, isPaused)));
        }

        /// <summary>beforeAssemblyReload (true), after the reload (false).</summary>
        public void SetReloading(bool now)
        {
            Volatile.Write(ref reloading, now ? 1 : 0);
            var seen = Last;
            Volatile.Write(ref last, new EditorActivity(seen.Compiling, seen.Importing, now, seen.PlayMode));
        }
    }

    /// <summary>A modal dialog as get-editor-state reports it.</summary>
    public class DialogState
    {
        public string Title;

        /// <summary>Its buttons' texts, in order.</summary>
        public List<string> Buttons = new List<string>();

        /// <summary>Unity's Script Updating Consent dialog (press-dialog-button never presses in it).</summary>
        public bool RewritesScripts;
    }

    /// <summary>get-editor-state's result (§6).</summary>
    public class EditorStateResult
    {
        public long MainThreadLastRanMsAgo;
        public int QueuedForMainThread;
        public long OldestQueuedMs;
        public bool Compiling;
        public bool Importing;
        public bool Reloading;

        /// <summary>edit, playing or paused.</summary>
        [ShortText]
        public string PlayMode;

        /// <summary>Absent unless the Editor shows a modal dialog the package can see.</summary>
        [OmitWhenNull]
        public DialogState Dialog;
    }

    /// <summary>The link's view of the main thread: get-editor-state's answer.</summary>
    public sealed class EditorStateSource
    {
        /// <summary>The method (§6), answered by the dispatcher itself.</summary>
        public const string Method = "get-editor-state";

        /// <summary>The extension's name in Capabilities.</summary>
        public const string Capability = "editor-state";

        readonly MainThreadQueue mainThread;
        readonly IEditorActivity activity;

        /// <param name="mainThread">The queue the main thread pumps.</param>
        /// <param name="activity">What the main thread last saw (null: an idle Editor in edit mode).</param>
        /// <param name="dialogs">The Editor's dialog windows (null: the platform shows none to the package).</param>
        public EditorStateSource(MainThreadQueue mainThread, IEditorActivity activity, IDialogWindows dialogs)
        {
            this.mainThread = mainThread;
            this.activity = activity;
            Dialogs = new ModalDialogs(dialogs);
        }

        /// <summary>The modal dialogs the Editor shows, where the platform lets the package see them.</summary>
        public ModalDialogs Dialogs { get; }

        /// <summary>The result of get-editor-state, without Ver. Any thread; never waits for the main thread.</summary>
        public JObject Read()
        {
            var report = mainThread.Report();
            var seen = activity != null ? activity.Last : EditorActivity.Idle;
            var state = new EditorStateResult
            {
                MainThreadLastRanMsAgo = report.LastRanMsAgo,
                QueuedForMainThread = report.Queued,
                OldestQueuedMs = report.OldestQueuedMs,
                Compiling = seen.Compiling,
                Importing = seen.Importing,
                Reloading = seen.Reloading,
                PlayMode = seen.PlayMode,
            };
            var dialog = Dialogs.Shown();
            if (dialog != null)
            {
                state.Dialog = new DialogState { Title = dialog.Title, Buttons = dialog.ButtonTexts.ToList(), RewritesScripts = dialog.RewritesScripts };
            }
            return ToolResults.ToJson(state);
        }
    }
}

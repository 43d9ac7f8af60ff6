// Unity's internal members the package reaches by reflection, bound from the
// types the Editor layer passes in (UnityEditor.LogEntries, LogEntry,
// EditorApplication). No compiler checks them, so each lookup tolerates a
// Unity that lacks the member and takes a named fallback; every one is
// checked per Unity version by Tests~/unity-versions (unity-api's
// reflection.rs lists them with these fallbacks), and each fallback is
// tested here under mono with types shaped like the versions that lack it.
// This file names no Unity type: it lives in the core.

using System;
using System.Collections.Generic;
using System.Reflection;

namespace UnityMcp.Core
{
    /// <summary>
    /// Unity's console through UnityEditor.LogEntries and LogEntry (checked
    /// against UnityCsReference's Editor/Mono/LogEntries.bindings.cs and
    /// ConsoleWindow.cs). Main thread only, as Unity's own Console window.
    /// </summary>
    public sealed class ConsoleAccess
    {
        const BindingFlags StaticMembers = BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic;
        const BindingFlags InstanceMembers = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;

        readonly Type entryType;
        readonly MethodInfo startGettingEntries;
        readonly MethodInfo endGettingEntries;
        readonly MethodInfo getEntryInternal;
        readonly MethodInfo clearEntries;
        // The Console window's own settings, which filter what
        // StartGettingEntries counts: optional (reading works without them,
        // filtered as the window shows it).
        readonly PropertyInfo consoleFlags;
        readonly MethodInfo getFilteringText;
        readonly MethodInfo setFilteringText;
        readonly FieldInfo entryMessage;
        readonly FieldInfo entryMode;
        // Where the stack trace starts in message (UTF-16 index): in 2021.3
        // and newer; without it the message splits at its first line break.
        readonly FieldInfo entryCallstackStart;

        /// <summary>Binds to these types (either may be null: a Unity without them).</summary>
        public ConsoleAccess(Type logEntries, Type logEntry)
        {
            entryType = logEntry;
            if (logEntries != null)
            {
                startGettingEntries = logEntries.GetMethod("StartGettingEntries", StaticMembers, null, Type.EmptyTypes, null);
                endGettingEntries = logEntries.GetMethod("EndGettingEntries", StaticMembers, null, Type.EmptyTypes, null);
                getEntryInternal = logEntry == null ? null
                    : logEntries.GetMethod("GetEntryInternal", StaticMembers, null, new[] { typeof(int), logEntry }, null);
                clearEntries = logEntries.GetMethod("Clear", StaticMembers, null, Type.EmptyTypes, null);
                consoleFlags = logEntries.GetProperty("consoleFlags", StaticMembers);
                getFilteringText = logEntries.GetMethod("GetFilteringText", StaticMembers, null, Type.EmptyTypes, null);
                setFilteringText = logEntries.GetMethod("SetFilteringText", StaticMembers, null, new[] { typeof(string) }, null);
            }
            if (logEntry != null)
            {
                entryMessage = logEntry.GetField("message", InstanceMembers);
                entryMode = logEntry.GetField("mode", InstanceMembers);
                entryCallstackStart = logEntry.GetField("callstackTextStartUTF16", InstanceMembers);
            }
            if (consoleFlags != null && consoleFlags.PropertyType != typeof(int))
            {
                consoleFlags = null;
            }
            if (entryCallstackStart != null && entryCallstackStart.FieldType != typeof(int))
            {
                entryCallstackStart = null;
            }
        }

        /// <summary>The members reading needs that this Unity lacks (empty: it can read).</summary>
        public List<string> MissingForReading()
        {
            var missing = new List<string>();
            if (startGettingEntries == null)
            {
                missing.Add("UnityEditor.LogEntries.StartGettingEntries");
            }
            if (endGettingEntries == null)
            {
                missing.Add("UnityEditor.LogEntries.EndGettingEntries");
            }
            if (getEntryInternal == null)
            {
                missing.Add("UnityEditor.LogEntries.GetEntryInternal");
            }
            if (entryMessage == null || entryMessage.FieldType != typeof(string))
            {
                missing.Add("UnityEditor.LogEntry.message");
            }
            if (entryMode == null || entryMode.FieldType != typeof(int))
            {
                missing.Add("UnityEditor.LogEntry.mode");
            }
            return missing;
        }

        /// <summary>Whether the Console window's filters can be set aside for a read.</summary>
        public bool ReadsUnfiltered => consoleFlags != null && consoleFlags.CanWrite && getFilteringText != null && setFilteringText != null;

        /// <summary>Whether Unity says where each entry's stack trace starts.</summary>
        public bool KnowsWhereStackTracesStart => entryCallstackStart != null;

        // ConsoleWindow.ConsoleFlags (a private enum there): the Collapse
        // toggle and the three level toggles.
        const int Collapse = 1 << 0;
        const int LogLevelLog = 1 << 7;
        const int LogLevelWarning = 1 << 8;
        const int LogLevelError = 1 << 9;

        // ConsoleWindow.Mode (the bits of LogEntry.mode). Bit 22 is
        // VisualScriptingError in Mode but kStacktraceIsPostprocessed in
        // 6000.0's LogMessageFlags, and the window counts it as neither
        // error nor warning: it is left out.
        const int ModeError = 1 << 0;
        const int ModeAssert = 1 << 1;
        const int ModeFatal = 1 << 4;
        const int ModeAssetImportError = 1 << 6;
        const int ModeAssetImportWarning = 1 << 7;
        const int ModeScriptingError = 1 << 8;
        const int ModeScriptingWarning = 1 << 9;
        const int ModeScriptCompileError = 1 << 11;
        const int ModeScriptCompileWarning = 1 << 12;
        const int ModeScriptingException = 1 << 17;
        const int ModeGraphCompileError = 1 << 20;
        const int ModeScriptingAssertion = 1 << 21;

        // As ConsoleWindow.GetStyleForErrorMode styles a row (its error set
        // includes ScriptingException, as 6000.0's
        // LogMessageFlagsExtensions.IsError does); anything else is a log.
        const int Errors = ModeFatal | ModeAssert | ModeError | ModeScriptingError | ModeAssetImportError | ModeScriptCompileError
            | ModeGraphCompileError | ModeScriptingAssertion | ModeScriptingException;
        const int Warnings = ModeScriptCompileWarning | ModeScriptingWarning | ModeAssetImportWarning;

        /// <summary>The console's entry type for LogEntry.mode.</summary>
        public static string Classify(int mode) => (mode & Errors) != 0 ? "Error" : (mode & Warnings) != 0 ? "Warning" : "Log";

        /// <summary>
        /// Every console entry, whatever the Console window's search text,
        /// Collapse and level toggles are: they are set to show everything
        /// for the read and put back as they were (where this Unity has them;
        /// else the entries the window shows).
        /// </summary>
        public List<LogEntry> ReadAll()
        {
            var missing = MissingForReading();
            if (missing.Count > 0)
            {
                throw new InvalidOperationException("this Unity version's console cannot be read (" + string.Join(", ", missing.ToArray()) + " not found)");
            }
            var flags = consoleFlags == null ? 0 : (int)consoleFlags.GetValue(null, null);
            var filter = getFilteringText == null || setFilteringText == null ? null : (string)getFilteringText.Invoke(null, null);
            var unfiltered = (flags & ~Collapse) | LogLevelLog | LogLevelWarning | LogLevelError;
            // Only what would filter is touched: SetFilteringText also
            // resets the window's selected entry (ConsoleWindow.SetFilter).
            var setFlags = consoleFlags != null && consoleFlags.CanWrite && unfiltered != flags;
            var setFilter = !string.IsNullOrEmpty(filter);
            try
            {
                if (setFlags)
                {
                    consoleFlags.SetValue(null, unfiltered, null);
                }
                if (setFilter)
                {
                    setFilteringText.Invoke(null, new object[] { "" });
                }
                return ReadEntries();
            }
            finally
            {
                // Nested, so the flags are put back even if the filter throws.
                try
                {
                    if (setFilter)
                    {
                        setFilteringText.Invoke(null, new object[] { filter });
                    }
                }
                finally
                {
                    if (setFlags)
                    {
                        consoleFlags.SetValue(null, flags, null);
                    }
                }
            }
        }

        List<LogEntry> ReadEntries()
        {
            var entries = new List<LogEntry>();
            var count = (int)startGettingEntries.Invoke(null, null);
            try
            {
                for (var i = 0; i < count; i++)
                {
                    var entry = Activator.CreateInstance(entryType, true);
                    // false: Unity has no entry at that row (it returns bool in 2021.3 and 6000.0).
                    if (getEntryInternal.Invoke(null, new[] { (object)i, entry }) is bool got && !got)
                    {
                        continue;
                    }
                    var text = (string)entryMessage.GetValue(entry) ?? "";
                    var callstackStart = entryCallstackStart == null ? -1 : (int)entryCallstackStart.GetValue(entry);
                    string message, stackTrace;
                    Split(text, callstackStart, out message, out stackTrace);
                    entries.Add(new LogEntry { Type = Classify((int)entryMode.GetValue(entry)), Message = message, StackTrace = stackTrace });
                }
            }
            finally
            {
                endGettingEntries.Invoke(null, null);
            }
            return entries;
        }

        /// <summary>
        /// LogEntry.message is the message then the stack trace. Where Unity
        /// says the stack trace starts (a multi-line message stays whole),
        /// split there, as ConsoleWindow.StacktraceWithHyperlinks does; where
        /// it does not say, or says something out of range, at the first
        /// line break.
        /// </summary>
        public static void Split(string text, int callstackStart, out string message, out string stackTrace)
        {
            if (callstackStart > 0 && callstackStart <= text.Length)
            {
                message = text.Substring(0, callstackStart).TrimEnd('\r', '\n');
                stackTrace = text.Substring(callstackStart);
                return;
            }
            var newline = text.IndexOf('\n');
            message = newline < 0 ? text : text.Substring(0, newline).TrimEnd('\r');
            stackTrace = newline < 0 ? "" : text.Substring(newline + 1);
        }

        /// <summary>Empties the console.</summary>
        public void Clear()
        {
            if (clearEntries == null)
            {
                throw new InvalidOperationException("this Unity version's console cannot be cleared (UnityEditor.LogEntries.Clear not found)");
            }
            clearEntries.Invoke(null, null);
        }
    }

    /// <summary>
    /// The Editor's internal tick (UnityCsReference
    /// Editor/Mono/EditorApplication.bindings.cs SignalTick, EditorApplication.cs
    /// tick): what wakes a throttled Editor loop from another thread.
    /// </summary>
    public static class EditorTick
    {
        const BindingFlags Internal = BindingFlags.NonPublic | BindingFlags.Static;

        /// <summary>
        /// EditorApplication.SignalTick, callable from any thread; a no-op
        /// where Unity lacks it (requests then wait for the loop's next update).
        /// </summary>
        public static Action Signal(Type editorApplication)
        {
            var method = editorApplication == null ? null : editorApplication.GetMethod("SignalTick", Internal, null, Type.EmptyTypes, null);
            if (method == null || method.ReturnType != typeof(void))
            {
                return delegate { };
            }
            try
            {
                return (Action)Delegate.CreateDelegate(typeof(Action), method);
            }
            catch (ArgumentException)
            {
                return delegate { };
            }
        }

        /// <summary>
        /// Runs <paramref name="handler"/> on EditorApplication's internal tick
        /// event where Unity has one (an internal static event of a void()
        /// delegate); false where it does not, and update alone pumps the queue.
        /// </summary>
        public static bool OnTick(Type editorApplication, Action handler)
        {
            var tick = editorApplication == null ? null : editorApplication.GetEvent("tick", Internal);
            var add = tick != null ? tick.GetAddMethod(true) : null;
            if (add == null)
            {
                return false;
            }
            try
            {
                var typed = Delegate.CreateDelegate(tick.EventHandlerType, handler.Target, handler.Method, false);
                if (typed == null)
                {
                    return false;
                }
                add.Invoke(null, new object[] { typed });
                return true;
            }
            catch (Exception e) when (e is TargetInvocationException || e is ArgumentException || e is MemberAccessException)
            {
                return false;
            }
        }
    }
}

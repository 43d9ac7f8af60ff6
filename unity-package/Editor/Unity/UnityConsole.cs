// Unity's console, read and cleared through UnityEditor.LogEntries, which is
// internal: by reflection. Main thread only (UnityEditorBackend calls it
// through its queue).

using System;
using System.Collections.Generic;
using System.Reflection;
using UnityEditor;
using CoreLogEntry = UnityMcp.Core.LogEntry;

namespace UnityMcp.Editor
{
    static class UnityConsole
    {
        // Every member below was checked against Unity-Technologies/UnityCsReference
        // at tags 2021.3.0f1, 2021.3.58f1 and 6000.0.78f1:
        // Editor/Mono/LogEntries.bindings.cs (LogEntries, LogEntry) and
        // Editor/Mono/ConsoleWindow.cs (ConsoleWindow.Mode, ConsoleFlags and how
        // the window classifies a row). They are looked up by name and the
        // optional ones may be absent, so a Unity that differs still reads.

        const BindingFlags StaticMembers = BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic;
        const BindingFlags InstanceMembers = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic;

        // The internal types live in UnityEditor's own assembly: asking it
        // directly finds them whatever the assembly is called in this version
        // (UnityEditor.dll, UnityEditor.CoreModule.dll).
        static readonly Assembly EditorAssembly = typeof(EditorApplication).Assembly;
        static readonly Type LogEntries = EditorAssembly.GetType("UnityEditor.LogEntries");
        static readonly Type LogEntryType = EditorAssembly.GetType("UnityEditor.LogEntry");

        static readonly MethodInfo StartGettingEntries = LogEntries?.GetMethod("StartGettingEntries", StaticMembers, null, Type.EmptyTypes, null);
        static readonly MethodInfo EndGettingEntries = LogEntries?.GetMethod("EndGettingEntries", StaticMembers, null, Type.EmptyTypes, null);
        static readonly MethodInfo GetEntryInternal = LogEntryType == null ? null
            : LogEntries?.GetMethod("GetEntryInternal", StaticMembers, null, new[] { typeof(int), LogEntryType }, null);
        static readonly MethodInfo ClearEntries = LogEntries?.GetMethod("Clear", StaticMembers, null, Type.EmptyTypes, null);
        // The Console window's own settings, which filter what StartGettingEntries
        // counts and GetEntryInternal returns: optional, as reading works without
        // them (filtered) on a Unity that lacks them.
        static readonly PropertyInfo ConsoleFlagsProperty = LogEntries?.GetProperty("consoleFlags", StaticMembers);
        static readonly MethodInfo GetFilteringText = LogEntries?.GetMethod("GetFilteringText", StaticMembers, null, Type.EmptyTypes, null);
        static readonly MethodInfo SetFilteringText = LogEntries?.GetMethod("SetFilteringText", StaticMembers, null, new[] { typeof(string) }, null);

        static readonly FieldInfo EntryMessage = LogEntryType?.GetField("message", InstanceMembers);
        static readonly FieldInfo EntryMode = LogEntryType?.GetField("mode", InstanceMembers);
        // Where the stack trace starts in message (UTF-16 index, what a C# string
        // is indexed by): in 2021.3 and 6000.0, absent before 2021.3.
        static readonly FieldInfo EntryCallstackStart = LogEntryType?.GetField("callstackTextStartUTF16", InstanceMembers);

        // ConsoleWindow.ConsoleFlags (a private enum there): the Collapse
        // toggle and the three level toggles.
        static class ConsoleFlags
        {
            public const int Collapse = 1 << 0;
            public const int LogLevelLog = 1 << 7;
            public const int LogLevelWarning = 1 << 8;
            public const int LogLevelError = 1 << 9;
        }

        // ConsoleWindow.Mode (the bits of LogEntry.mode). Bit 22 is
        // VisualScriptingError in Mode but kStacktraceIsPostprocessed in
        // 6000.0's LogMessageFlags, and the window counts it as neither error
        // nor warning: it is left out.
        static class Mode
        {
            public const int Error = 1 << 0;
            public const int Assert = 1 << 1;
            public const int Fatal = 1 << 4;
            public const int AssetImportError = 1 << 6;
            public const int AssetImportWarning = 1 << 7;
            public const int ScriptingError = 1 << 8;
            public const int ScriptingWarning = 1 << 9;
            public const int ScriptCompileError = 1 << 11;
            public const int ScriptCompileWarning = 1 << 12;
            public const int ScriptingException = 1 << 17;
            public const int GraphCompileError = 1 << 20;
            public const int ScriptingAssertion = 1 << 21;

            // As ConsoleWindow.GetStyleForErrorMode styles a row (its error set
            // includes ScriptingException, as 6000.0's
            // LogMessageFlagsExtensions.IsError does); anything else is a log.
            public const int Errors = Fatal | Assert | Error | ScriptingError | AssetImportError | ScriptCompileError
                | GraphCompileError | ScriptingAssertion | ScriptingException;
            public const int Warnings = ScriptCompileWarning | ScriptingWarning | AssetImportWarning;
        }

        static string Classify(int mode) => (mode & Mode.Errors) != 0 ? "Error" : (mode & Mode.Warnings) != 0 ? "Warning" : "Log";

        /// <summary>
        /// Every console entry, whatever the Console window's search text,
        /// Collapse and level toggles are: they are set to show everything for
        /// the read and put back as they were.
        /// </summary>
        public static List<CoreLogEntry> ReadAll()
        {
            if (StartGettingEntries == null || EndGettingEntries == null || GetEntryInternal == null || EntryMessage == null || EntryMode == null)
            {
                throw new InvalidOperationException("this Unity version's console cannot be read (UnityEditor.LogEntries not found)");
            }
            var flags = ConsoleFlagsProperty == null ? 0 : (int)ConsoleFlagsProperty.GetValue(null, null);
            var filter = GetFilteringText == null || SetFilteringText == null ? null : (string)GetFilteringText.Invoke(null, null);
            var unfiltered = (flags & ~ConsoleFlags.Collapse) | ConsoleFlags.LogLevelLog | ConsoleFlags.LogLevelWarning | ConsoleFlags.LogLevelError;
            // Only what would filter is touched: SetFilteringText also
            // resets the window's selected entry (ConsoleWindow.SetFilter).
            var setFlags = ConsoleFlagsProperty != null && ConsoleFlagsProperty.CanWrite && unfiltered != flags;
            var setFilter = !string.IsNullOrEmpty(filter);
            try
            {
                if (setFlags)
                {
                    ConsoleFlagsProperty.SetValue(null, unfiltered, null);
                }
                if (setFilter)
                {
                    SetFilteringText.Invoke(null, new object[] { "" });
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
                        SetFilteringText.Invoke(null, new object[] { filter });
                    }
                }
                finally
                {
                    if (setFlags)
                    {
                        ConsoleFlagsProperty.SetValue(null, flags, null);
                    }
                }
            }
        }

        static List<CoreLogEntry> ReadEntries()
        {
            var entries = new List<CoreLogEntry>();
            var count = (int)StartGettingEntries.Invoke(null, null);
            try
            {
                for (var i = 0; i < count; i++)
                {
                    var entry = Activator.CreateInstance(LogEntryType, true);
                    // false: Unity has no entry at that row (it returns bool in 2021.3 and 6000.0).
                    if (GetEntryInternal.Invoke(null, new[] { (object)i, entry }) is bool got && !got)
                    {
                        continue;
                    }
                    var text = (string)EntryMessage.GetValue(entry) ?? "";
                    var callstackStart = EntryCallstackStart == null ? -1 : (int)EntryCallstackStart.GetValue(entry);
                    string message, stackTrace;
                    Split(text, callstackStart, out message, out stackTrace);
                    entries.Add(new CoreLogEntry
                    {
                        Type = Classify((int)EntryMode.GetValue(entry)),
                        Message = message,
                        StackTrace = stackTrace,
                    });
                }
            }
            finally
            {
                EndGettingEntries.Invoke(null, null);
            }
            return entries;
        }

        /// <summary>
        /// LogEntry.message is the message then the stack trace. Where Unity
        /// says the stack trace starts (a multi-line message stays whole), split
        /// there, as ConsoleWindow.StacktraceWithHyperlinks does; where it does
        /// not say, or says something out of range, at the first line break.
        /// </summary>
        static void Split(string text, int callstackStart, out string message, out string stackTrace)
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
        public static void Clear()
        {
            if (ClearEntries == null)
            {
                throw new InvalidOperationException("this Unity version's console cannot be cleared (UnityEditor.LogEntries.Clear not found)");
            }
            ClearEntries.Invoke(null, null);
        }
    }
}

// Unity's console, read and cleared through UnityEditor.LogEntries, which is
// internal: by reflection, bound by the core's ConsoleAccess (which names
// the fallback for each member a Unity version lacks; checked per version
// by Tests~/unity-versions). Main thread only (UnityEditorBackend calls it
// through its queue).

using System.Collections.Generic;
using System.Reflection;
using UnityEditor;
using UnityMcp.Core;
using CoreLogEntry = UnityMcp.Core.LogEntry;

namespace UnityMcp.Editor
{
    static class UnityConsole
    {
        // The internal types live in UnityEditor's own assembly: asking it
        // directly finds them whatever the assembly is called in this version
        // (UnityEditor.dll, UnityEditor.CoreModule.dll).
        static readonly Assembly EditorAssembly = typeof(EditorApplication).Assembly;

        static readonly ConsoleAccess Access =
            new ConsoleAccess(EditorAssembly.GetType("UnityEditor.LogEntries"), EditorAssembly.GetType("UnityEditor.LogEntry"));

        /// <summary>
        /// Every console entry, whatever the Console window's search text,
        /// Collapse and level toggles are.
        /// </summary>
        public static List<CoreLogEntry> ReadAll() => Access.ReadAll();

        /// <summary>Empties the console.</summary>
        public static void Clear() => Access.Clear();
    }
}

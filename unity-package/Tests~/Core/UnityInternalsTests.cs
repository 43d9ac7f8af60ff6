// Unity's internal members reached by reflection (ConsoleAccess,
// EditorTick), bound to types shaped as the Unity versions declare them —
// and to types that lack a member, which the package must survive with the
// fallback unity-api's reflection.rs names for it.

using System;
using System.Collections.Generic;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    // Shaped like UnityEditor.LogEntries and LogEntry in 2021.3 … 6000.7
    // (Editor/Mono/LogEntries.bindings.cs: internal, static, extern).
    static class CurrentLogEntries
    {
        internal static readonly List<string> Messages = new List<string>();
        internal static readonly List<int> Modes = new List<int>();
        internal static readonly List<int> CallstackStarts = new List<int>();
        internal static int Flags = 1 << 0; // Collapse on, every level off
        internal static string Filter = "needle";
        internal static int FlagsSeenWhileReading = -1;
        internal static string FilterSeenWhileReading;
        internal static int Open;

        internal static int consoleFlags
        {
            get { return Flags; }
            set { Flags = value; }
        }

        internal static int StartGettingEntries()
        {
            Open++;
            FlagsSeenWhileReading = Flags;
            FilterSeenWhileReading = Filter;
            return Messages.Count;
        }

        internal static void EndGettingEntries() => Open--;

        internal static bool GetEntryInternal(int row, CurrentLogEntry outputEntry)
        {
            outputEntry.message = Messages[row];
            outputEntry.mode = Modes[row];
            outputEntry.callstackTextStartUTF16 = CallstackStarts[row];
            return true;
        }

        internal static void Clear() => Messages.Clear();

        internal static string GetFilteringText() => Filter;

        internal static void SetFilteringText(string filteringText) => Filter = filteringText;
    }

    sealed class CurrentLogEntry
    {
        public string message;
        public int mode;
        public int callstackTextStartUTF16;
    }

    // Shaped like a Unity without the Console window's settings and without
    // callstackTextStartUTF16.
    static class OlderLogEntries
    {
        internal static int StartGettingEntries() => 1;

        internal static void EndGettingEntries() { }

        internal static bool GetEntryInternal(int row, OlderLogEntry outputEntry)
        {
            outputEntry.message = "first line\nsecond line of the message\nat Foo.Bar()";
            outputEntry.mode = 1 << 9; // ScriptingWarning
            return true;
        }

        internal static void Clear() { }
    }

    sealed class OlderLogEntry
    {
        public string message;
        public int mode;
    }

    // A Unity that renamed the row reader.
    static class RenamedLogEntries
    {
        internal static int StartGettingEntries() => 0;

        internal static void EndGettingEntries() { }

        internal static bool GetEntry(int row, CurrentLogEntry outputEntry) => false;

        internal static int Cleared;

        internal static void Clear() => Cleared++;
    }

    static class TickingEditor
    {
        internal static int Signals;
        internal static event Action tick;

        internal static void SignalTick() => Signals++;

        internal static void RaiseTick() => tick?.Invoke();
    }

    static class EditorWithOtherTick
    {
        internal static event Action<int> tick;

        internal static void Raise() => tick?.Invoke(1);
    }

    [TestFixture]
    public class ConsoleAccessTests
    {
        [Test]
        public void TheCurrentShapeReadsEveryEntryUnfilteredAndPutsTheWindowBack()
        {
            CurrentLogEntries.Messages.Clear();
            CurrentLogEntries.Modes.Clear();
            CurrentLogEntries.CallstackStarts.Clear();
            CurrentLogEntries.Messages.Add("two-line\nmessage\nat A.B()");
            CurrentLogEntries.Modes.Add(1 << 8); // ScriptingError
            CurrentLogEntries.CallstackStarts.Add("two-line\nmessage\n".Length);
            CurrentLogEntries.Flags = 1 << 0;
            CurrentLogEntries.Filter = "needle";
            var access = new ConsoleAccess(typeof(CurrentLogEntries), typeof(CurrentLogEntry));
            Assert.IsEmpty(access.MissingForReading());
            Assert.IsTrue(access.ReadsUnfiltered);
            Assert.IsTrue(access.KnowsWhereStackTracesStart);

            var entries = access.ReadAll();

            Assert.AreEqual(1, entries.Count);
            Assert.AreEqual("Error", entries[0].Type);
            Assert.AreEqual("two-line\nmessage", entries[0].Message);
            Assert.AreEqual("at A.B()", entries[0].StackTrace);
            // Read with Collapse off and every level on, and no search text …
            Assert.AreEqual((1 << 7) | (1 << 8) | (1 << 9), CurrentLogEntries.FlagsSeenWhileReading);
            Assert.AreEqual("", CurrentLogEntries.FilterSeenWhileReading);
            // … and the window as the user left it afterwards.
            Assert.AreEqual(1 << 0, CurrentLogEntries.Flags);
            Assert.AreEqual("needle", CurrentLogEntries.Filter);
            Assert.AreEqual(0, CurrentLogEntries.Open);
        }

        [Test]
        public void WithoutTheWindowsSettingsOrTheStackTraceStartItStillReads()
        {
            var access = new ConsoleAccess(typeof(OlderLogEntries), typeof(OlderLogEntry));
            Assert.IsEmpty(access.MissingForReading());
            Assert.IsFalse(access.ReadsUnfiltered);
            Assert.IsFalse(access.KnowsWhereStackTracesStart);

            var entries = access.ReadAll();

            // Split at the first line break, as before callstackTextStartUTF16.
            Assert.AreEqual("first line", entries[0].Message);
            Assert.AreEqual("second line of the message\nat Foo.Bar()", entries[0].StackTrace);
            Assert.AreEqual("Warning", entries[0].Type);
        }

        [Test]
        public void WithoutTheRowReaderReadingFailsNamingItAndClearingStillWorks()
        {
            var access = new ConsoleAccess(typeof(RenamedLogEntries), typeof(CurrentLogEntry));
            CollectionAssert.AreEqual(new[] { "UnityEditor.LogEntries.GetEntryInternal" }, access.MissingForReading());
            var e = Assert.Throws<InvalidOperationException>(() => access.ReadAll());
            StringAssert.Contains("console cannot be read", e.Message);
            StringAssert.Contains("UnityEditor.LogEntries.GetEntryInternal", e.Message);
            var before = RenamedLogEntries.Cleared;
            access.Clear();
            Assert.AreEqual(before + 1, RenamedLogEntries.Cleared);
        }

        [Test]
        public void WithoutTheTypesNothingWorksAndEachFailureSaysWhy()
        {
            var access = new ConsoleAccess(null, null);
            Assert.AreEqual(5, access.MissingForReading().Count);
            StringAssert.Contains("UnityEditor.LogEntry.message", Assert.Throws<InvalidOperationException>(() => access.ReadAll()).Message);
            StringAssert.Contains("UnityEditor.LogEntries.Clear", Assert.Throws<InvalidOperationException>(() => access.Clear()).Message);
        }
    }

    [TestFixture]
    public class EditorTickTests
    {
        [Test]
        public void SignalTickIsCalledWhereUnityHasIt()
        {
            var before = TickingEditor.Signals;
            EditorTick.Signal(typeof(TickingEditor))();
            Assert.AreEqual(before + 1, TickingEditor.Signals);
        }

        [Test]
        public void WithoutSignalTickTheSignalDoesNothing()
        {
            Assert.DoesNotThrow(() => EditorTick.Signal(typeof(OlderLogEntries))());
            Assert.DoesNotThrow(() => EditorTick.Signal(null)());
        }

        [Test]
        public void TheHandlerRunsOnTheTickEventWhereUnityHasOne()
        {
            var ran = 0;
            Assert.IsTrue(EditorTick.OnTick(typeof(TickingEditor), () => ran++));
            TickingEditor.RaiseTick();
            Assert.AreEqual(1, ran);
        }

        [Test]
        public void WithoutATickOfTheRightShapeUpdateAlonePumps()
        {
            var ran = 0;
            Assert.IsFalse(EditorTick.OnTick(typeof(OlderLogEntries), () => ran++));
            Assert.IsFalse(EditorTick.OnTick(typeof(EditorWithOtherTick), () => ran++));
            EditorWithOtherTick.Raise();
            Assert.AreEqual(0, ran);
        }
    }
}

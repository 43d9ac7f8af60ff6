// get-editor-state (extension editor-state) and press-dialog-button
// (extension dialog-buttons), §6: the link answers the first without the
// main thread, from the queue's clock, what the main thread last recorded
// and the dialog windows; the second presses in a dialog only when the
// settings allow it, never in the Script Updating Consent dialog, and only
// where the platform can (a fake IDialogWindows stands in for Windows).
// Durations are read on a fake clock; where the real one runs, only that
// they grow is checked.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    /// <summary>Needs the test's main thread: a queue the test may never pump.</summary>
    [McpTool("wait-for-main-thread", Description = "Runs on the test's main thread (EditorStateTests.HeldQueue)")]
    public class WaitForMainThreadTool : UnityTool<NoParams>
    {
        internal static MainThreadQueue Queue;

        protected override Task<JObject> Run(NoParams p, ToolContext context) => Queue.Run(() => new JObject { ["Ran"] = true });
    }

    /// <summary>Milliseconds the test sets.</summary>
    sealed class FakeClock
    {
        long now;

        public FakeClock(long start)
        {
            now = start;
        }

        public long Now
        {
            get { return Interlocked.Read(ref now); }
            set { Interlocked.Exchange(ref now, value); }
        }

        public long Read() => Now;
    }

    /// <summary>Dialog windows as a test shows them; records presses.</summary>
    sealed class FakeDialogs : IDialogWindows
    {
        public bool Pressable = true;
        public List<DialogWindow> Shown = new List<DialogWindow>();
        public readonly List<string> Pressed = new List<string>();

        public bool CanPress => Pressable;

        public List<DialogWindow> Visible() => Shown.ToList();

        public void Press(DialogWindow dialog, DialogButton button) => Pressed.Add(dialog.Title + "/" + button.RawText);

        public static DialogWindow Dialog(string title, params string[] buttons)
        {
            return new DialogWindow { Title = title, Buttons = buttons.Select(b => new DialogButton { RawText = b }).ToList() };
        }
    }

    [TestFixture]
    public class EditorStateTests
    {
        const string SaveScene = "Save Scene";

        static Dispatcher Dispatcher(SecuritySettings settings, EditorStateSource state)
        {
            return new Dispatcher(ToolTests.Registry(), new SecurityChecker(() => settings), "0.1.0") { EditorState = state };
        }

        static JObject Answer(Dispatcher dispatcher, string request)
        {
            var answer = dispatcher.Answer(Encoding.UTF8.GetBytes(request), new ToolContext()).Result;
            var parsed = answer == null ? null : JObject.Parse(Encoding.UTF8.GetString(answer));
            OutputSchemaCheck.Check(request, parsed);
            return parsed;
        }

        static string Request(string id, string method, string parameters = "{}")
        {
            return "{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\",\"params\":" + parameters + "}";
        }

        static void WaitFor(Func<bool> condition, string what)
        {
            var deadline = DateTime.UtcNow.AddSeconds(10);
            while (!condition())
            {
                if (DateTime.UtcNow > deadline)
                {
                    Assert.Fail("never: " + what);
                }
                Thread.Sleep(2);
            }
        }

        [Test]
        public void ItIsAnsweredWhileTheMainThreadIsHeld()
        {
            // A main thread that never comes back: nobody pumps the queue.
            var queue = new MainThreadQueue();
            WaitForMainThreadTool.Queue = queue;
            var recorder = new EditorActivityRecorder();
            recorder.Record(false, false, false, false);
            var server = new EditorServer(Dispatcher(new SecuritySettings(), new EditorStateSource(queue, recorder, null)));
            var port = server.Start(0);
            try
            {
                using (var client = new ServerTests.Client(port, Framing.Header))
                {
                    client.Send(Request("held", "wait-for-main-thread"));
                    WaitFor(() => queue.Pending == 1, "the call queued for the main thread");
                    client.Send(Request("s-1", EditorStateSource.Method));
                    var first = client.Receive();
                    Assert.AreEqual("s-1", (string)first["id"], "answered at once, ahead of the held call: " + first);
                    var state = (JObject)first["result"];
                    Assert.GreaterOrEqual((int)state["QueuedForMainThread"], 1, state.ToString());
                    Assert.AreEqual("edit", (string)state["PlayMode"]);
                    Assert.AreEqual("0.1.0", (string)state["Ver"]);
                    Assert.IsNull(state["Dialog"], "no dialog where the platform shows none");

                    Thread.Sleep(50);
                    client.Send(Request("s-2", EditorStateSource.Method));
                    var second = client.Receive();
                    Assert.AreEqual("s-2", (string)second["id"], second.ToString());
                    Assert.Greater((long)second["result"]["OldestQueuedMs"], (long)state["OldestQueuedMs"], "the oldest call's wait grows");
                    Assert.Greater((long)second["result"]["MainThreadLastRanMsAgo"], (long)state["MainThreadLastRanMsAgo"], "and so does the time since the main thread last ran");
                    Assert.GreaterOrEqual((int)second["result"]["QueuedForMainThread"], 1);

                    // The main thread comes back: the held call is answered, nothing waits.
                    Assert.AreEqual(1, queue.Pump());
                    var released = client.Receive();
                    Assert.AreEqual("held", (string)released["id"], released.ToString());
                    client.Send(Request("s-3", EditorStateSource.Method));
                    var after = client.Receive();
                    Assert.AreEqual(0, (int)after["result"]["QueuedForMainThread"], after.ToString());
                    Assert.AreEqual(0, (long)after["result"]["OldestQueuedMs"]);
                }
            }
            finally
            {
                server.Shutdown("EditorQuit");
            }
        }

        [Test]
        public void TheAnswerOnAFakeClock()
        {
            var clock = new FakeClock(1000);
            var queue = new MainThreadQueue(clock.Read);
            var recorder = new EditorActivityRecorder();
            recorder.Record(false, true, true, false);
            var dialogs = new FakeDialogs { Shown = { FakeDialogs.Dialog(SaveScene, "&Save", "Don&'t Save", "Cancel") } };
            var dispatcher = Dispatcher(new SecuritySettings(), new EditorStateSource(queue, recorder, dialogs));
            clock.Now = 1500;
            var held = queue.Run(() => 1);
            clock.Now = 4000;
            var answer = Answer(dispatcher, Request("s", EditorStateSource.Method));
            var json = answer.ToString(Newtonsoft.Json.Formatting.None);
            Console.WriteLine("get-editor-state: " + json);
            Assert.AreEqual(
                "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":{\"MainThreadLastRanMsAgo\":3000,\"QueuedForMainThread\":1,\"OldestQueuedMs\":2500,"
                + "\"Compiling\":false,\"Importing\":true,\"Reloading\":false,\"PlayMode\":\"playing\","
                + "\"Dialog\":{\"Title\":\"Save Scene\",\"Buttons\":[\"Save\",\"Don't Save\",\"Cancel\"],\"RewritesScripts\":false},\"Ver\":\"0.1.0\"}}",
                json);
            Assert.IsFalse(held.IsCompleted, "read without the main thread");

            clock.Now = 5000;
            queue.Pump();
            clock.Now = 5250;
            var state = (JObject)Answer(dispatcher, Request("t", EditorStateSource.Method))["result"];
            Assert.AreEqual(250, (long)state["MainThreadLastRanMsAgo"], "from the end of the last pump");
            Assert.AreEqual(0, (int)state["QueuedForMainThread"]);
            Assert.AreEqual(0, (long)state["OldestQueuedMs"], "0 when nothing waits");
        }

        [Test]
        public void WorkAPumpHasNotReachedStillWaitsAndTheWorkAheadHoldsTheMainThread()
        {
            var clock = new FakeClock(0);
            var queue = new MainThreadQueue(clock.Read);
            var dialogOpen = new ManualResetEventSlim(false);
            var answered = new ManualResetEventSlim(false);
            var first = queue.Run(() =>
            {
                // A modal dialog opened by the work: the main thread stays in it.
                dialogOpen.Set();
                answered.Wait();
                return 1;
            });
            clock.Now = 10;
            var second = queue.Run(() => 2);
            clock.Now = 100;
            var pump = Task.Factory.StartNew(() => queue.Pump(), TaskCreationOptions.LongRunning);
            Assert.IsTrue(dialogOpen.Wait(10000));
            clock.Now = 3100;
            var report = queue.Report();
            Assert.AreEqual(1, report.Queued, "the second waits behind the dialog");
            Assert.AreEqual(3090, report.OldestQueuedMs);
            Assert.AreEqual(3000, report.LastRanMsAgo, "the main thread last came to the queue when the pump began");
            answered.Set();
            Assert.AreEqual(2, pump.Result);
            Assert.AreEqual(1, first.Result);
            Assert.AreEqual(2, second.Result);
            report = queue.Report();
            Assert.AreEqual(0, report.Queued);
            Assert.AreEqual(0, report.OldestQueuedMs);
            Assert.AreEqual(0, report.LastRanMsAgo);
        }

        [Test]
        public void ItIsNeitherJournaledNorQueuedAndAbsentWithoutTheExtension()
        {
            var queue = new MainThreadQueue();
            var dispatcher = Dispatcher(new SecuritySettings(), new EditorStateSource(queue, null, null));
            dispatcher.Journal = new RequestJournal(new MemoryJournalStore());
            var state = Answer(dispatcher, Request("e-1", EditorStateSource.Method))["result"];
            Assert.AreEqual(0, dispatcher.Journal.Count, "not journaled: a client asks every few seconds while a call waits");
            Assert.AreEqual(0, queue.Pending, "nothing queued for the main thread");
            Assert.AreEqual("edit", (string)state["PlayMode"], "nothing recorded yet: an idle Editor in edit mode");
            Assert.AreEqual(false, (bool)state["Compiling"]);
            var badTimeout = Answer(dispatcher, Request("e-2", EditorStateSource.Method, "{\"TimeoutSeconds\":\"soon\"}"));
            Assert.AreEqual("invalid_params", (string)badTimeout["error"]["data"]["type"], "TimeoutSeconds is checked as for every method");

            var without = Answer(Dispatcher(new SecuritySettings(), null), Request("e-3", EditorStateSource.Method));
            Assert.AreEqual(-32601, (int)without["error"]["code"], "an Editor without the extension does not know the method");
        }

        [Test]
        public void TheMainThreadsRecordedFlagsAreReported()
        {
            var recorder = new EditorActivityRecorder();
            var dispatcher = Dispatcher(new SecuritySettings(), new EditorStateSource(new MainThreadQueue(), recorder, null));
            Func<JObject> read = () => (JObject)Answer(dispatcher, Request("f", EditorStateSource.Method))["result"];

            recorder.Record(true, false, false, true);
            var state = read();
            Assert.AreEqual(true, (bool)state["Compiling"]);
            Assert.AreEqual(false, (bool)state["Importing"]);
            Assert.AreEqual("edit", (string)state["PlayMode"], "paused counts only in play mode");

            recorder.Record(false, true, true, true);
            state = read();
            Assert.AreEqual(false, (bool)state["Compiling"]);
            Assert.AreEqual(true, (bool)state["Importing"]);
            Assert.AreEqual("paused", (string)state["PlayMode"]);

            recorder.SetReloading(true);
            state = read();
            Assert.AreEqual(true, (bool)state["Reloading"], "a reload begun");
            Assert.AreEqual(true, (bool)state["Importing"], "what the last tick saw is kept");
            recorder.Record(false, false, true, false);
            Assert.AreEqual(true, (bool)read()["Reloading"], "a tick keeps the reload until it ends");
            Assert.AreEqual("playing", (string)read()["PlayMode"]);
            recorder.SetReloading(false);
            Assert.AreEqual(false, (bool)read()["Reloading"]);

            Assert.AreEqual("edit", EditorActivity.PlayModeOf(false, false));
            Assert.AreEqual("playing", EditorActivity.PlayModeOf(true, false));
            Assert.AreEqual("paused", EditorActivity.PlayModeOf(true, true));
        }

        [Test]
        public void CapabilitiesNameTheExtensionsOffered()
        {
            var editor = new EditorInfo { Capabilities = new[] { "resume", "progress" } };
            Func<Dispatcher, string[]> capabilities = d => Answer(d, Request("v", "get-version"))["result"]["Capabilities"].ToObject<string[]>();

            var plain = Dispatcher(new SecuritySettings(), null);
            plain.Editor = editor;
            CollectionAssert.AreEqual(new[] { "resume", "progress", "output-schema" }, capabilities(plain), "without the link's view of the main thread");

            var state = Dispatcher(new SecuritySettings(), new EditorStateSource(new MainThreadQueue(), null, null));
            state.Editor = editor;
            CollectionAssert.AreEqual(new[] { "resume", "progress", "output-schema", "editor-state" }, capabilities(state));

            var seen = Dispatcher(new SecuritySettings(), new EditorStateSource(new MainThreadQueue(), null, new FakeDialogs { Pressable = false }));
            seen.Editor = editor;
            CollectionAssert.AreEqual(new[] { "resume", "progress", "output-schema", "editor-state" }, capabilities(seen), "dialogs seen but not pressable: no dialog-buttons");

            var windows = Dispatcher(new SecuritySettings(), new EditorStateSource(new MainThreadQueue(), null, new FakeDialogs()));
            windows.Editor = editor;
            windows.Token = "t";
            var withToken = Answer(windows, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get-version\",\"x-token\":\"t\"}")["result"]["Capabilities"].ToObject<string[]>();
            CollectionAssert.AreEqual(new[] { "resume", "progress", "output-schema", "editor-state", "dialog-buttons", "token" }, withToken);
        }

        [Test]
        public void PressDialogButtonIsOfferedOnlyWhereDialogsCanBePressed()
        {
            var all = "{\"IncludeDevelopmentOnly\":true}";
            Func<Dispatcher, List<string>> listed = d => ((JArray)Answer(d, Request("l", "get-tool-details", all))["result"]["Tools"]).Select(t => (string)t["name"]).ToList();
            var allowed = new SecuritySettings { AllowPressingDialogButtons = true };

            foreach (var elsewhere in new[]
            {
                Dispatcher(allowed, null),
                Dispatcher(allowed, new EditorStateSource(new MainThreadQueue(), null, null)),
                Dispatcher(allowed, new EditorStateSource(new MainThreadQueue(), null, new FakeDialogs { Pressable = false })),
            })
            {
                CollectionAssert.DoesNotContain(listed(elsewhere), ModalDialogs.PressTool);
                var answer = Answer(elsewhere, Request("p", ModalDialogs.PressTool, "{\"Button\":\"Save\"}"));
                Assert.AreEqual("method_not_found", (string)answer["error"]["data"]["type"], answer.ToString());
            }
            CollectionAssert.DoesNotContain(listed(Dispatcher(allowed, null)), EditorStateSource.Method, "get-editor-state is no tool");

            var windows = Dispatcher(allowed, new EditorStateSource(new MainThreadQueue(), null, new FakeDialogs()));
            var details = (JArray)Answer(windows, Request("l", "get-tool-details"))["result"]["Tools"];
            var press = details.FirstOrDefault(t => (string)t["name"] == ModalDialogs.PressTool);
            Assert.IsNotNull(press, "a public tool where the platform supports it");
            Assert.AreEqual(true, (bool)press["annotations"]["destructiveHint"]);
            CollectionAssert.AreEqual(new[] { "Button", "Title", "TimeoutSeconds" }, ((JObject)press["parameterSchema"]["Properties"]).Properties().Select(p => p.Name).ToArray());
        }

        [Test]
        public void PressingIsOffByDefault()
        {
            Assert.IsFalse(new SecuritySettings().AllowPressingDialogButtons);
            Assert.AreEqual(ToolGate.DialogButtons, ToolTests.Registry().Find(ModalDialogs.PressTool).Info.Gate, "declared on the tool");
            var dialogs = new FakeDialogs { Shown = { FakeDialogs.Dialog(SaveScene, "Save", "Cancel") } };
            var answer = Answer(Dispatcher(new SecuritySettings(), new EditorStateSource(new MainThreadQueue(), null, dialogs)), Request("p", ModalDialogs.PressTool, "{\"Button\":\"Save\"}"));
            Assert.AreEqual("security_blocked", (string)answer["error"]["data"]["type"], answer.ToString());
            Assert.AreEqual(ModalDialogs.PressTool, (string)answer["error"]["data"]["command"]);
            StringAssert.Contains("Allow Pressing Dialog Buttons", (string)answer["error"]["data"]["reason"]);
            CollectionAssert.IsEmpty(dialogs.Pressed);
        }

        static JObject Press(FakeDialogs dialogs, string parameters)
        {
            var dispatcher = Dispatcher(new SecuritySettings { AllowPressingDialogButtons = true }, new EditorStateSource(new MainThreadQueue(), null, dialogs));
            return Answer(dispatcher, Request("p", ModalDialogs.PressTool, parameters));
        }

        [Test]
        public void APressOfAButtonTheDialogShows()
        {
            var dialogs = new FakeDialogs { Shown = { FakeDialogs.Dialog(SaveScene, "&Save", "Don&'t Save", "Cancel") } };
            var answer = Press(dialogs, "{\"Button\":\"Don't Save\",\"Title\":\"Save Scene\"}");
            Assert.AreEqual("Don't Save", (string)answer["result"]["Pressed"], answer.ToString());
            Assert.AreEqual(SaveScene, (string)answer["result"]["Title"]);
            CollectionAssert.AreEqual(new[] { "Save Scene/Don&'t Save" }, dialogs.Pressed, "the button reported as Don't Save");
        }

        [Test]
        public void TheScriptUpdatingConsentDialogIsNeverPressed()
        {
            var consent = FakeDialogs.Dialog(ModalDialogs.ScriptUpdatingConsent, "I Made a Backup. Go Ahead!", "No Thanks");
            var dialogs = new FakeDialogs { Shown = { consent } };
            var state = (JObject)Answer(Dispatcher(new SecuritySettings(), new EditorStateSource(new MainThreadQueue(), null, dialogs)), Request("s", EditorStateSource.Method))["result"];
            Assert.AreEqual(true, (bool)state["Dialog"]["RewritesScripts"], state.ToString());
            foreach (var button in new[] { "I Made a Backup. Go Ahead!", "No Thanks", "Nope" })
            {
                var answer = Press(dialogs, "{\"Button\":\"" + button + "\"}");
                Assert.AreEqual("security_blocked", (string)answer["error"]["data"]["type"], answer.ToString());
                StringAssert.Contains("the user answers it in Unity", (string)answer["error"]["data"]["reason"]);
            }
            CollectionAssert.IsEmpty(dialogs.Pressed);
            Assert.IsTrue(ModalDialogs.IsScriptUpdatingConsent("script updating consent"));
            Assert.IsFalse(ModalDialogs.IsScriptUpdatingConsent(SaveScene));
        }

        [TestCase("{\"Button\":\"Close\"}", "Button", "has no button \"Close\"; its buttons: \"Save\", \"Don't Save\", \"Cancel\"")]
        [TestCase("{}", "Button", "has no button \"\"; its buttons: \"Save\", \"Don't Save\", \"Cancel\"")]
        [TestCase("{\"Button\":\"save\"}", "Button", "its buttons: \"Save\", \"Don't Save\", \"Cancel\"")]
        [TestCase("{\"Button\":\"Save\",\"Title\":\"Build Settings\"}", "Title", "The dialog shown is \"Save Scene\" (buttons: \"Save\", \"Don't Save\", \"Cancel\"), not \"Build Settings\"")]
        public void ABadPressIsInvalidParamsNamingTheButtons(string parameters, string parameter, string message)
        {
            var dialogs = new FakeDialogs { Shown = { FakeDialogs.Dialog(SaveScene, "&Save", "Don&'t Save", "Cancel") } };
            var answer = Press(dialogs, parameters);
            Assert.AreEqual(-32602, (int)answer["error"]["code"], answer.ToString());
            Assert.AreEqual(parameter, (string)answer["error"]["data"]["parameter"]);
            StringAssert.Contains(message, (string)answer["error"]["data"]["message"]);
            CollectionAssert.IsEmpty(dialogs.Pressed);
        }

        [Test]
        public void NoDialogOrADisabledButtonIsInvalidParams()
        {
            var none = Press(new FakeDialogs(), "{\"Button\":\"Save\"}");
            Assert.AreEqual("invalid_params", (string)none["error"]["data"]["type"], none.ToString());
            StringAssert.Contains("shows no dialog", (string)none["error"]["data"]["message"]);

            var dialog = FakeDialogs.Dialog(SaveScene, "Save", "Cancel");
            dialog.Buttons[0].Enabled = false;
            var dialogs = new FakeDialogs { Shown = { dialog } };
            var disabled = Press(dialogs, "{\"Button\":\"Save\"}");
            Assert.AreEqual("invalid_params", (string)disabled["error"]["data"]["type"], disabled.ToString());
            StringAssert.Contains("is disabled", (string)disabled["error"]["data"]["message"]);
            CollectionAssert.IsEmpty(dialogs.Pressed);
        }

        [Test]
        public void TheDialogReportedIsTheOneWaitingForAnAnswer()
        {
            Assert.IsNull(ModalDialogs.Select(new List<DialogWindow>()));
            var owner = FakeDialogs.Dialog("Build Settings", "Build");
            owner.Enabled = false;
            var progress = FakeDialogs.Dialog("Building");
            var question = FakeDialogs.Dialog("Overwrite?", "Yes", "No");
            Assert.AreSame(question, ModalDialogs.Select(new[] { progress, owner, question }), "enabled, with buttons: the one a dialog opened");
            Assert.AreSame(owner, ModalDialogs.Select(new[] { progress, owner }), "else the topmost with buttons");
            Assert.AreSame(progress, ModalDialogs.Select(new[] { progress }), "else the topmost");

            var failing = new ThrowingDialogs();
            var state = new EditorStateSource(new MainThreadQueue(), null, failing).Read();
            Assert.IsNull(state["Dialog"], "a platform that will not say leaves Dialog out; the answer still comes");
        }

        sealed class ThrowingDialogs : IDialogWindows
        {
            public bool CanPress => true;

            public List<DialogWindow> Visible()
            {
                throw new DllNotFoundException("user32.dll");
            }

            public void Press(DialogWindow dialog, DialogButton button)
            {
                throw new InvalidOperationException();
            }
        }

        [TestCase("&Yes", "Yes")]
        [TestCase("Don&'t Save", "Don't Save")]
        [TestCase("Save && Quit", "Save & Quit")]
        [TestCase("Cancel", "Cancel")]
        [TestCase("Odd&", "Odd")]
        [TestCase("", "")]
        public void ButtonTextsAreReportedWithoutMnemonics(string raw, string shown)
        {
            Assert.AreEqual(shown, DialogText.WithoutMnemonics(raw));
        }

        [Test]
        public void Win32ReportsPushButtonsOnlyAndIsWindowsOnly()
        {
            // BS_PUSHBUTTON, BS_DEFPUSHBUTTON (with other style bits), BS_COMMANDLINK.
            Assert.IsTrue(Win32DialogWindows.IsPushButtonStyle(0x50010000));
            Assert.IsTrue(Win32DialogWindows.IsPushButtonStyle(0x50010001));
            Assert.IsTrue(Win32DialogWindows.IsPushButtonStyle(0x0E));
            // BS_AUTOCHECKBOX, BS_AUTORADIOBUTTON, BS_GROUPBOX.
            Assert.IsFalse(Win32DialogWindows.IsPushButtonStyle(0x50010003));
            Assert.IsFalse(Win32DialogWindows.IsPushButtonStyle(0x09));
            Assert.IsFalse(Win32DialogWindows.IsPushButtonStyle(0x07));
            if (!Win32DialogWindows.IsWindows)
            {
                Assert.IsNull(Win32DialogWindows.OfCurrentThread(), "no dialogs (and no press-dialog-button) off Windows");
            }
        }
    }
}

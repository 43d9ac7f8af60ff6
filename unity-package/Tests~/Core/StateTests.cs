// The discovery file, the resume journal and the main-thread queue.

using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class DiscoveryTests
    {
        string project;

        [SetUp]
        public void MakeProject()
        {
            project = Path.Combine(Path.GetTempPath(), "unity-mcp-discovery-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(project);
        }

        [TearDown]
        public void RemoveProject() => Directory.Delete(project, true);

        [Test]
        public void TheFileHasTheFieldsOfSection7()
        {
            DiscoveryFile.Write(project, new DiscoveryInfo { Port = 8701, Pid = 42, ProjectPath = project, UnityVersion = "6000.0.65f1", PackageVersion = "0.1.0", ServerSessionId = "abc", State = "ready" });
            // Read as clients read it: a timestamp stays a string.
            var file = (JObject)FramingTests.ReadJson(Path.Combine(project, "Library/MCPInstance.json"));
            StringAssert.Contains("\"updatedAt\": \"", File.ReadAllText(Path.Combine(project, "Library/MCPInstance.json")));
            Assert.AreEqual(8701, (int)file["port"]);
            Assert.AreEqual(42, (int)file["pid"]);
            Assert.AreEqual(project, (string)file["projectPath"]);
            Assert.AreEqual(1, (int)file["protocolVersion"]);
            Assert.AreEqual("abc", (string)file["serverSessionId"]);
            Assert.AreEqual("ready", (string)file["state"]);
            StringAssert.IsMatch(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", (string)file["updatedAt"]);
            Assert.AreEqual(0, Directory.GetFiles(Path.Combine(project, "Library"), "*.tmp").Length, "no temporary file left");
        }

        [Test]
        public void ReadersNeverSeeAPartialFile()
        {
            var path = DiscoveryFile.PathIn(project);
            DiscoveryFile.Write(project, new DiscoveryInfo { Port = 1, State = "starting" });
            var stop = false;
            var writer = Task.Run(() =>
            {
                for (var i = 0; i < 300; i++)
                {
                    DiscoveryFile.Write(project, new DiscoveryInfo { Port = i, ProjectPath = new string('p', 2000), State = i % 2 == 0 ? "ready" : "reloading" });
                }
                stop = true;
            });
            var reads = 0;
            while (!Volatile.Read(ref stop))
            {
                string text;
                try
                {
                    text = File.ReadAllText(path);
                }
                catch (IOException)
                {
                    continue; // Windows only: the file is being replaced.
                }
                Assert.DoesNotThrow(() => JObject.Parse(text), "read " + reads + " found a cut file");
                reads++;
            }
            writer.Wait();
            Assert.Greater(reads, 0);
        }
    }

    [TestFixture]
    public class JournalTests
    {
        [Test]
        public void RequestsAreUnknownStartedThenCompleted()
        {
            var journal = new RequestJournal(new MemoryJournalStore());
            JObject response;
            Assert.AreEqual(JournalState.Unknown, journal.StateOf(new JValue("c-1"), "compile", out response));
            journal.Started(new JValue("c-1"), "compile");
            Assert.AreEqual(JournalState.Started, journal.StateOf(new JValue("c-1"), "compile", out response));
            journal.Completed(new JValue("c-1"), "compile", new JObject { ["result"] = new JObject { ["Success"] = true } });
            Assert.AreEqual(JournalState.Completed, journal.StateOf(new JValue("c-1"), "compile", out response));
            Assert.AreEqual(true, (bool)response["result"]["Success"]);
        }

        [Test]
        public void IdsKeepTheirTypeAndMethodsAreTold()
        {
            var journal = new RequestJournal(new MemoryJournalStore());
            journal.Started(new JValue(1), "compile");
            JObject response;
            Assert.AreEqual(JournalState.Unknown, journal.StateOf(new JValue("1"), "compile", out response), "1 and \"1\" differ");
            Assert.AreEqual(JournalState.Unknown, journal.StateOf(new JValue(1), "get-logs", out response));
        }

        [Test]
        public void TheJournalSurvivesAReloadThroughItsStore()
        {
            var store = new MemoryJournalStore();
            var before = new RequestJournal(store);
            before.Started(new JValue("a"), "run-tests");
            before.Completed(new JValue("b"), "compile", new JObject { ["result"] = new JObject { ["ErrorCount"] = 0 } });
            // A domain reload: the objects are gone, the store is not.
            var after = new RequestJournal(store);
            JObject response;
            Assert.AreEqual(JournalState.Started, after.StateOf(new JValue("a"), "run-tests", out response));
            Assert.AreEqual(JournalState.Completed, after.StateOf(new JValue("b"), "compile", out response));
            Assert.AreEqual(0, (int)response["result"]["ErrorCount"]);
        }

        [Test]
        public void ItRemembersTheMostRecentOnlyAndSurvivesACorruptStore()
        {
            var store = new MemoryJournalStore();
            var journal = new RequestJournal(store);
            for (var i = 0; i < RequestJournal.Capacity + 10; i++)
            {
                journal.Started(new JValue(i), "ping");
            }
            Assert.AreEqual(RequestJournal.Capacity, journal.Count);
            JObject response;
            Assert.AreEqual(JournalState.Unknown, journal.StateOf(new JValue(0), "ping", out response));
            store.Save(() => "{not json");
            Assert.AreEqual(0, new RequestJournal(store).Count);
        }
    }

    [TestFixture]
    public class MainThreadTests
    {
        [Test]
        public void WorkRunsOnThePumpingThread()
        {
            var queue = new MainThreadQueue();
            var pumping = Thread.CurrentThread.ManagedThreadId;
            Task<int> fromWorker = null;
            Task.Run(() => { fromWorker = queue.Run(() => Thread.CurrentThread.ManagedThreadId); }).Wait();
            Assert.IsFalse(fromWorker.IsCompleted, "nothing runs before the pump");
            var deadline = DateTime.UtcNow.AddSeconds(5);
            while (queue.Pending == 0 && DateTime.UtcNow < deadline)
            {
                Thread.Sleep(1);
            }
            Assert.AreEqual(1, queue.Pump());
            Assert.AreEqual(pumping, fromWorker.Result);
        }

        [Test]
        public void AnExceptionGoesToTheCaller()
        {
            var queue = new MainThreadQueue();
            var failing = queue.Run<int>(() => throw new InvalidOperationException("no scene"));
            queue.Pump();
            var error = Assert.Throws<AggregateException>(() => failing.Wait());
            Assert.AreEqual("no scene", error.InnerException.Message);
            Assert.AreEqual(0, queue.Pump(), "the queue is empty again");
        }

        [Test]
        public void WorkAskedForOnTheMainThreadRunsAtOnce()
        {
            var queue = new MainThreadQueue();
            queue.BindToCurrentThread();
            var woken = 0;
            queue.Wake = () => woken++;
            var done = queue.Run(() => 42);
            Assert.IsTrue(done.IsCompleted, "waiting for a pump on the pumping thread would never end");
            Assert.AreEqual(42, done.Result);
            Assert.AreEqual(0, woken);
            var elsewhere = System.Threading.Tasks.Task.Factory.StartNew(() => queue.Run(() => 7)).Result;
            Assert.AreEqual(1, woken, "work from another thread wakes the main thread");
            Assert.IsFalse(elsewhere.IsCompleted);
            Assert.AreEqual(1, queue.Pump());
            Assert.AreEqual(7, elsewhere.Result);
        }
    }
}

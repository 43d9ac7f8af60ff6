// The per-user registry of open Editors (EditorRegistry): where it is, what
// an entry holds (never the token nor the server session), its modes on
// Unix, written beside the discovery file and deleted when the Editor says
// "stopped", and a registry that cannot be written never stopping the
// discovery file.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using UnityMcp.Core;

/// <summary>
/// The whole run keeps the registry of open Editors in a temporary folder,
/// never the user's own: the host processes the tests start inherit it.
/// </summary>
[SetUpFixture]
public class RegistryOfTheTestRun
{
    string before;
    string folder;

    [SetUp]
    public void UseATemporaryRegistry()
    {
        before = Environment.GetEnvironmentVariable(EditorRegistry.FolderVariable);
        folder = Path.Combine(Path.GetTempPath(), "unity-mcp-editors-run-" + Guid.NewGuid().ToString("N"));
        Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, folder);
    }

    [TearDown]
    public void RestoreTheRegistry()
    {
        Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, before);
        if (Directory.Exists(folder))
        {
            Directory.Delete(folder, true);
        }
    }
}

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class EditorRegistryTests
    {
        const string Token = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";
        const string Session = "0123456789abcdef0123456789abcdef";

        string before;
        string xdgBefore;
        string root;
        string folder;
        string project;
        List<string> warnings;

        [SetUp]
        public void UseATemporaryRegistry()
        {
            before = Environment.GetEnvironmentVariable(EditorRegistry.FolderVariable);
            xdgBefore = Environment.GetEnvironmentVariable("XDG_STATE_HOME");
            root = Path.Combine(Path.GetTempPath(), "unity-mcp-editors-" + Guid.NewGuid().ToString("N"));
            folder = Path.Combine(root, "registry", "editors");
            project = Path.Combine(root, "project");
            Directory.CreateDirectory(project);
            Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, folder);
            warnings = new List<string>();
        }

        [TearDown]
        public void Restore()
        {
            Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, before);
            Environment.SetEnvironmentVariable("XDG_STATE_HOME", xdgBefore);
            Directory.Delete(root, true);
        }

        DiscoveryInfo Info(string state, int port = 8701) => new DiscoveryInfo
        {
            Port = port,
            Pid = 4242,
            ProjectPath = project.Replace('\\', '/'),
            UnityVersion = "6000.0.65f1",
            PackageVersion = "0.1.0",
            ServerSessionId = Session,
            State = state,
            Token = Token,
        };

        void Publish(DiscoveryInfo info) => DiscoveryFile.Publish(project, info, warnings.Add);

        string Entry => Path.Combine(folder, "4242.json");

        [Test]
        public void AnEntryHasItsFieldsAndNeitherTheTokenNorTheServerSession()
        {
            Publish(Info("ready"));
            CollectionAssert.IsEmpty(warnings);
            Assert.AreEqual(Entry, EditorRegistry.PathOf(4242));
            var entry = (JObject)FramingTests.ReadJson(Entry);
            var discovery = (JObject)FramingTests.ReadJson(DiscoveryFile.PathIn(project));
            CollectionAssert.AreEquivalent(
                new[] { "pid", "projectPath", "port", "unityVersion", "packageVersion", "protocolVersion", "state", "updatedAt" },
                entry.Properties().Select(p => p.Name).ToArray());
            Assert.AreEqual(JTokenType.Integer, entry["pid"].Type);
            Assert.AreEqual(JTokenType.Integer, entry["port"].Type);
            Assert.AreEqual(JTokenType.Integer, entry["protocolVersion"].Type);
            Assert.AreEqual(4242, (int)entry["pid"]);
            Assert.AreEqual((string)discovery["projectPath"], (string)entry["projectPath"]);
            Assert.AreEqual(8701, (int)entry["port"]);
            Assert.AreEqual("6000.0.65f1", (string)entry["unityVersion"]);
            Assert.AreEqual("0.1.0", (string)entry["packageVersion"]);
            Assert.AreEqual(DiscoveryFile.ProtocolVersion, (int)entry["protocolVersion"]);
            Assert.AreEqual("ready", (string)entry["state"]);
            Assert.AreEqual(JTokenType.String, entry["updatedAt"].Type);
            Assert.AreEqual((string)discovery["updatedAt"], (string)entry["updatedAt"], "stamped as the discovery file is, at the same time");
            var text = File.ReadAllText(Entry);
            StringAssert.DoesNotContain(Token, text);
            StringAssert.DoesNotContain(Session, text);
            StringAssert.DoesNotContain("token", text);
            StringAssert.DoesNotContain("serverSessionId", text);
            Assert.AreEqual(Token, (string)discovery["token"], "the token stays in the discovery file");
        }

        [Test]
        public void TheFolderIsTheUsersOnlyAndSoIsTheEntry()
        {
            Publish(Info("ready"));
            Assert.AreEqual("700", TokenTests.Mode(folder), "a new folder");
            Assert.AreEqual("600", TokenTests.Mode(Entry), "a new entry");
            CollectionAssert.AreEqual(new[] { "4242.json" }, Directory.GetFileSystemEntries(folder).Select(Path.GetFileName).ToArray(), "no temporary file left");

            // A folder that others could read, and an entry too: both made the user's only.
            TokenTests.Chmod(folder, "755");
            TokenTests.Chmod(Entry, "644");
            Publish(Info("reloading"));
            Assert.AreEqual("700", TokenTests.Mode(folder), "an existing folder");
            Assert.AreEqual("600", TokenTests.Mode(Entry), "rewritten over an existing entry");
            CollectionAssert.AreEqual(new[] { "4242.json" }, Directory.GetFileSystemEntries(folder).Select(Path.GetFileName).ToArray());
            CollectionAssert.IsEmpty(warnings);
        }

        [Test]
        public void EachStateButStoppedIsWrittenAndStoppedDeletesTheEntry()
        {
            Publish(Info("starting"));
            Assert.AreEqual("starting", (string)FramingTests.ReadJson(Entry)["state"]);
            Publish(Info("ready", 8702));
            Assert.AreEqual("ready", (string)FramingTests.ReadJson(Entry)["state"]);
            Assert.AreEqual(8702, (int)FramingTests.ReadJson(Entry)["port"]);
            Publish(Info("reloading", 8702));
            Assert.AreEqual("reloading", (string)FramingTests.ReadJson(Entry)["state"]);

            Publish(Info("stopped", 8702));
            Assert.IsFalse(File.Exists(Entry), "stopped: the entry is deleted");
            Assert.AreEqual("stopped", (string)FramingTests.ReadJson(DiscoveryFile.PathIn(project))["state"], "the discovery file says so");
            Publish(Info("stopped", 8702));
            EditorRegistry.Remove(4242);
            CollectionAssert.IsEmpty(warnings, "an entry already gone is fine");
        }

        [Test]
        public void ARegistryThatCannotBeWrittenIsWarnedOfAndTheDiscoveryFileIsStillWritten()
        {
            // The folder would be under a file: it cannot be made.
            var file = Path.Combine(root, "a-file");
            File.WriteAllText(file, "");
            Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, Path.Combine(file, "editors"));
            Publish(Info("ready"));
            Assert.AreEqual(1, warnings.Count, string.Join("\n", warnings));
            StringAssert.StartsWith("Unity MCP: cannot write this Editor's entry in the registry of open Editors (" + Path.Combine(file, "editors") + "): ", warnings[0]);
            Assert.AreEqual("ready", (string)FramingTests.ReadJson(DiscoveryFile.PathIn(project))["state"]);

            Assert.DoesNotThrow(() => EditorRegistry.Publish(Info("ready"), DateTime.UtcNow, null), "no one to warn: still no exception");
            Assert.DoesNotThrow(() => EditorRegistry.Publish(Info("ready"), DateTime.UtcNow, m => { throw new InvalidOperationException(m); }), "a warning that fails: still no exception");
        }

        [Test]
        public void ADiscoveryFileThatCannotBeWrittenThrowsAndWritesNoEntryButStoppedStillDeletesIt()
        {
            Publish(Info("ready"));
            Assert.IsTrue(File.Exists(Entry));
            var other = Path.Combine(root, "other-project");
            Directory.CreateDirectory(other);
            // Library is a file: no discovery file can be written there.
            File.WriteAllText(Path.Combine(other, "Library"), "");
            Assert.Catch<IOException>(() => DiscoveryFile.Publish(other, Info("reloading"), warnings.Add));
            Assert.AreEqual("ready", (string)FramingTests.ReadJson(Entry)["state"], "the entry says no more than the discovery file");
            Assert.Catch<IOException>(() => DiscoveryFile.Publish(other, Info("stopped"), warnings.Add));
            Assert.IsFalse(File.Exists(Entry), "an Editor that quits leaves no entry, discovery file or not");
            CollectionAssert.IsEmpty(warnings);
        }

        [Test]
        public void TheFolderIsTheVariableWhenSetElseTheXdgStateHomeElseHome()
        {
            Assert.AreEqual(folder, EditorRegistry.Folder(), "UNITY_MCP_EDITORS_DIR");
            var home = Environment.GetEnvironmentVariable("HOME");
            Assert.IsFalse(string.IsNullOrEmpty(home), "HOME is set for these tests");

            Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, "");
            Environment.SetEnvironmentVariable("XDG_STATE_HOME", "/var/lib/someone/state");
            Assert.AreEqual("/var/lib/someone/state/unity-mcp/editors", EditorRegistry.Folder(), "an empty variable is not set; XDG_STATE_HOME absolute");
            Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, null);
            Assert.AreEqual("/var/lib/someone/state/unity-mcp/editors", EditorRegistry.Folder(), "unset; XDG_STATE_HOME absolute");
            Environment.SetEnvironmentVariable("XDG_STATE_HOME", "relative/state");
            Assert.AreEqual(home + "/.local/state/unity-mcp/editors", EditorRegistry.Folder(), "XDG_STATE_HOME relative: ignored");
            Environment.SetEnvironmentVariable("XDG_STATE_HOME", "");
            Assert.AreEqual(home + "/.local/state/unity-mcp/editors", EditorRegistry.Folder(), "XDG_STATE_HOME empty");
            Environment.SetEnvironmentVariable("XDG_STATE_HOME", null);
            Assert.AreEqual(home + "/.local/state/unity-mcp/editors", EditorRegistry.Folder(), "XDG_STATE_HOME unset");
            Environment.SetEnvironmentVariable(EditorRegistry.FolderVariable, "/elsewhere/editors");
            Assert.AreEqual("/elsewhere/editors", EditorRegistry.Folder());
            Assert.AreEqual("/elsewhere/editors/77.json", EditorRegistry.PathOf(77));
        }

        [Test]
        public void TheFolderOfEachPlatform()
        {
            var variables = new Dictionary<string, string> { ["HOME"] = "/Users/ada", ["XDG_STATE_HOME"] = "/xdg" };
            Func<string, string> variable = name => variables.ContainsKey(name) ? variables[name] : null;
            Func<string> localAppData = () => "/C/Users/ada/AppData/Local";
            Assert.AreEqual(Path.Combine("/C/Users/ada/AppData/Local", "UnityMcp", "Editors"), EditorRegistry.Folder("windows", variable, localAppData));
            Assert.AreEqual("/Users/ada/Library/Application Support/UnityMcp/Editors", EditorRegistry.Folder("macos", variable, localAppData), "XDG_STATE_HOME is not read on macOS");
            Assert.AreEqual("/xdg/unity-mcp/editors", EditorRegistry.Folder("linux", variable, localAppData));
            Assert.AreEqual("/xdg/unity-mcp/editors", EditorRegistry.Folder("freebsd", variable, localAppData), "other Unixes as Linux");
            variables.Remove("XDG_STATE_HOME");
            Assert.AreEqual("/Users/ada/.local/state/unity-mcp/editors", EditorRegistry.Folder("linux", variable, localAppData));
            variables[EditorRegistry.FolderVariable] = "/set";
            foreach (var os in new[] { "windows", "macos", "linux" })
            {
                Assert.AreEqual("/set", EditorRegistry.Folder(os, variable, localAppData), os);
            }
        }

        [Test]
        public void TheHeadlessHostHasAnEntryWhileItRunsAndNoneOnceItQuits()
        {
            string entry;
            using (var host = new TokenTests.HostProcess())
            {
                entry = Path.Combine(folder, host.Pid + ".json");
                Assert.IsTrue(Eventually(() => File.Exists(entry)), "the host's entry is written");
                var json = (JObject)FramingTests.ReadJson(entry);
                var discovery = (JObject)FramingTests.ReadJson(DiscoveryFile.PathIn(host.Project));
                Assert.AreEqual(host.Pid, (int)json["pid"]);
                Assert.AreEqual((string)discovery["projectPath"], (string)json["projectPath"]);
                Assert.AreEqual(host.Port, (int)json["port"]);
                Assert.AreEqual("ready", (string)json["state"]);
                Assert.IsNull(json["token"]);
                Assert.AreEqual("700", TokenTests.Mode(folder));
                Assert.AreEqual("600", TokenTests.Mode(entry));

                var reload = host.Post("/reload", "{\"wait\":true}");
                Assert.IsTrue(Eventually(() => (string)FramingTests.ReadJson(entry)["state"] == "ready"), "ready again after the reload");
                Assert.AreEqual((int)reload["port"], (int)FramingTests.ReadJson(entry)["port"]);
            }
            Assert.IsFalse(File.Exists(entry), "the host quit: its entry is deleted");
        }

        static bool Eventually(Func<bool> condition)
        {
            var until = DateTime.UtcNow.AddSeconds(10);
            while (true)
            {
                try
                {
                    if (condition())
                    {
                        return true;
                    }
                }
                catch (IOException)
                {
                    // Read while being replaced (Windows only).
                }
                if (DateTime.UtcNow > until)
                {
                    return false;
                }
                System.Threading.Thread.Sleep(10);
            }
        }
    }
}

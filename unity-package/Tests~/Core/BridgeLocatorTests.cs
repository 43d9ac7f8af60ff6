// Finding the bridge: real processes (small /bin/sh scripts made
// executable) in temporary folders stand for the downloaded binary, a
// bridge on PATH and npx; the commands built for `setup` are run for real
// to see the arguments arrive whole.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    [TestFixture]
    public class BridgeLocatorTests
    {
        string root;
        string project;

        [SetUp]
        public void MakeFolders()
        {
            root = Path.Combine(Path.GetTempPath(), "unity-mcp-locator-" + Guid.NewGuid().ToString("N"));
            project = Path.Combine(root, "My Project");
            Directory.CreateDirectory(project);
        }

        [TearDown]
        public void RemoveFolders() => Directory.Delete(root, true);

        /// <summary>Writes a /bin/sh script, executable unless told.</summary>
        internal static string Script(string dir, string name, string body, bool executable = true)
        {
            Directory.CreateDirectory(dir);
            var path = Path.Combine(dir, name);
            File.WriteAllText(path, "#!/bin/sh\n" + body + "\n");
            if (executable)
            {
                var chmod = ProcessRunner.Instance.Run("/bin/chmod", "755 " + CommandLine.Quote(path, false), TimeSpan.FromSeconds(10));
                Assert.AreEqual(0, chmod.ExitCode, "chmod " + path + ": " + chmod.StartError + chmod.Errors);
            }
            return path;
        }

        internal static string Bridge(string dir, string version) => Script(dir, "unity-mcp-bridge", "echo 'unity-mcp-bridge " + version + "'");

        BridgeEnvironment Env(params string[] pathEntries) => new BridgeEnvironment
        {
            PathVariable = string.Join(":", pathEntries),
            Project = project,
            IsWindows = false,
            PackageVersion = "0.1.0",
            VersionTimeout = TimeSpan.FromSeconds(5),
        };

        string Dir(string name) => Path.Combine(root, name);

        [Test]
        public void DownloadedComesBeforePathWhichComesBeforeNpxAndEachVersionIsRead()
        {
            var downloaded = Bridge(BridgeLocator.DownloadFolder(project, "0.1.0"), "0.1.0");
            var onPath = Bridge(Dir("cargo-bin"), "0.0.9");
            var marker = Path.Combine(root, "npx-ran");
            var npx = Script(Dir("node-bin"), "npx", "touch '" + marker + "'; echo 'unity-mcp-bridge 9.9.9'");

            var found = BridgeLocator.FindAll(Env(Dir("node-bin"), Dir("cargo-bin")));

            CollectionAssert.AreEqual(new[] { BridgeKind.Downloaded, BridgeKind.OnPath, BridgeKind.Npx }, found.Select(f => f.Kind).ToArray(), string.Join("\n", found));
            Assert.AreEqual(downloaded, found[0].FileName);
            Assert.AreEqual("0.1.0", found[0].Version, found[0].VersionProblem);
            Assert.IsFalse(found[0].NotYetFetched);
            Assert.AreEqual(onPath, found[1].FileName);
            Assert.AreEqual("0.0.9", found[1].Version, found[1].VersionProblem);
            Assert.AreEqual(npx, found[2].FileName);
            CollectionAssert.AreEqual(new[] { "-y", "unity-mcp-bridge@0.1.0" }, found[2].LeadingArgs);
            Assert.AreEqual("0.1.0", found[2].Version, "npx: the pinned version");
            Assert.IsTrue(found[2].NotYetFetched);
            StringAssert.Contains("npx -y unity-mcp-bridge@0.1.0", found[2].DisplayPath);
            Assert.IsFalse(File.Exists(marker), "npx is never run to learn a version (it may download)");
            Assert.AreSame(found[0], BridgeLocator.Choose(found));
        }

        [Test]
        public void WithoutADownloadThePathBridgeIsChosen()
        {
            Bridge(Dir("bin"), "0.2.0");
            Script(Dir("bin"), "npx", "exit 0");
            var found = BridgeLocator.FindAll(Env(Dir("bin")));
            CollectionAssert.AreEqual(new[] { BridgeKind.OnPath, BridgeKind.Npx }, found.Select(f => f.Kind).ToArray());
            Assert.AreEqual(BridgeKind.OnPath, BridgeLocator.Choose(found).Kind);
            Assert.AreEqual("0.2.0", BridgeLocator.Choose(found).Version);
        }

        [Test]
        public void AnotherVersionsDownloadIsNotThisPackagesBridge()
        {
            Bridge(BridgeLocator.DownloadFolder(project, "0.0.1"), "0.0.1");
            Assert.AreEqual(0, BridgeLocator.FindAll(Env()).Count);
        }

        [Test]
        public void TheFirstOnPathWinsAndEmptyEntriesAreSkipped()
        {
            var first = Bridge(Dir("a"), "1.0.0");
            Bridge(Dir("b"), "2.0.0");
            var found = BridgeLocator.FindAll(Env("", Dir("missing"), "", Dir("a"), Dir("b"), ""));
            Assert.AreEqual(1, found.Count, string.Join("\n", found));
            Assert.AreEqual(first, found[0].FileName);
            Assert.AreEqual("1.0.0", found[0].Version);
        }

        [Test]
        public void NothingFoundIsAnEmptyList()
        {
            var found = BridgeLocator.FindAll(Env("", Dir("nowhere"), "/nonexistent/bin", ""));
            Assert.AreEqual(0, found.Count);
            Assert.IsNull(BridgeLocator.Choose(found));
            Assert.AreEqual(0, BridgeLocator.FindAll(new BridgeEnvironment { PathVariable = "", Project = project, PackageVersion = "0.1.0" }).Count);
        }

        [Test]
        public void AFolderOrANonExecutableFileOfThatNameIsSkipped()
        {
            Directory.CreateDirectory(Path.Combine(Dir("a"), "unity-mcp-bridge"));
            Script(Dir("b"), "unity-mcp-bridge", "echo 'unity-mcp-bridge 6.6.6'", executable: false);
            var real = Bridge(Dir("c"), "0.3.0");
            Directory.CreateDirectory(Path.Combine(Dir("a"), "npx"));
            var found = BridgeLocator.FindAll(Env(Dir("a"), Dir("b"), Dir("c")));
            Assert.AreEqual(1, found.Count, string.Join("\n", found));
            Assert.AreEqual(real, found[0].FileName);
            Assert.AreEqual("0.3.0", found[0].Version);
            Assert.IsFalse(BridgeLocator.IsRunnable(Path.Combine(Dir("b"), "unity-mcp-bridge"), false));
            Assert.IsFalse(BridgeLocator.IsRunnable(Path.Combine(Dir("a"), "unity-mcp-bridge"), false));
        }

        [Test]
        public void AVersionThatNeverComesTimesOutWithoutHanging()
        {
            Script(Dir("bin"), "unity-mcp-bridge", "sleep 10; echo 'unity-mcp-bridge 0.1.0'");
            Script(Dir("bin"), "npx", "exit 0");
            var env = Env(Dir("bin"));
            env.VersionTimeout = TimeSpan.FromSeconds(1);
            var watch = Stopwatch.StartNew();
            var found = BridgeLocator.FindAll(env);
            Assert.Less(watch.Elapsed.TotalSeconds, 5, "the deadline is kept");
            Assert.AreEqual(BridgeKind.OnPath, found[0].Kind);
            Assert.IsNull(found[0].Version);
            StringAssert.Contains("did not answer within 1 s", found[0].VersionProblem);
            StringAssert.StartsWith("unknown (", found[0].VersionText);
            Assert.AreEqual(BridgeKind.Npx, BridgeLocator.Choose(found).Kind, "a bridge that answers is preferred");
        }

        [Test]
        public void AFailingOrStrangeVersionIsUnknown()
        {
            Script(Dir("a"), "unity-mcp-bridge", "echo 'unity-mcp-bridge 0.1.0'; exit 3");
            Script(Dir("b"), "unity-mcp-bridge", "echo 'something else 0.1.0'");
            var failing = BridgeLocator.FindAll(Env(Dir("a")))[0];
            Assert.IsNull(failing.Version);
            StringAssert.Contains("exit code 3", failing.VersionProblem);
            var strange = BridgeLocator.FindAll(Env(Dir("b")))[0];
            Assert.IsNull(strange.Version);
            StringAssert.Contains("something else", strange.VersionProblem);
            Assert.AreSame(failing, BridgeLocator.Choose(new List<BridgeInstall> { failing }), "with no better one, it is still offered");
        }

        [TestCase("unity-mcp-bridge 0.1.0\n", "0.1.0")]
        [TestCase("unity-mcp-bridge 1.2.3-beta.1\r\n", "1.2.3-beta.1")]
        [TestCase("unity-mcp-bridge\n", null)]
        [TestCase("uvx 0.1.0\n", null)]
        [TestCase("", null)]
        [TestCase("unity-mcp-bridge 0.1.0\nmore\n", null)]
        public void VersionLines(string output, string version)
        {
            Assert.AreEqual(version, BridgeLocator.ParseVersion(output));
        }

        /// <summary>A fake that prints each argument it gets as [arg].</summary>
        static string Echo(string dir, string name) => Script(dir, name, "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done");

        static string[] Run(ProcessCommand command)
        {
            var result = ProcessRunner.Instance.Run(command.FileName, command.Arguments, TimeSpan.FromSeconds(10));
            Assert.IsNull(result.StartError);
            Assert.AreEqual(0, result.ExitCode, result.Errors);
            return result.Output.Split(new[] { '\n' }, StringSplitOptions.RemoveEmptyEntries);
        }

        [Test]
        public void SetupCommandsDeliverEveryArgumentWhole()
        {
            var bridge = Echo(Dir("bin"), "unity-mcp-bridge");
            var npx = Echo(Dir("bin"), "npx");
            var found = BridgeLocator.FindAll(Env(Dir("bin")));
            var odd = Path.Combine(root, "it's a \"project\" with $HOME, \\$PATH, `x`, two \\\\ backslashes & one at the end\\");
            var binary = BridgeLocator.SetupCommand(found.Single(f => f.Kind == BridgeKind.OnPath), "cursor", odd);
            Assert.AreEqual(bridge, binary.FileName);
            CollectionAssert.AreEqual(new[] { "[--project]", "[" + odd + "]", "[setup]", "[cursor]", "[--via]", "[binary]" }, Run(binary));
            var viaNpx = BridgeLocator.SetupCommand(found.Single(f => f.Kind == BridgeKind.Npx), "claude-code", project);
            Assert.AreEqual(npx, viaNpx.FileName);
            CollectionAssert.AreEqual(new[] { "[-y]", "[unity-mcp-bridge@0.1.0]", "[--project]", "[" + project + "]", "[setup]", "[claude-code]", "[--via]", "[npx]" }, Run(viaNpx));
        }

        [TestCase("plain", "plain")]
        [TestCase("", "\"\"")]
        [TestCase(@"C:\My Project", "\"C:\\My Project\"")]
        [TestCase(@"C:\My Project\", "\"C:\\My Project\\\\\"")]
        [TestCase("say \"hi\"", "\"say \\\"hi\\\"\"")]
        [TestCase(@"a\\""b", "\"a\\\\\\\\\\\"b\"")]
        [TestCase(@"C:\no\spaces", @"C:\no\spaces")]
        public void WindowsQuoting(string arg, string quoted)
        {
            Assert.AreEqual(quoted, CommandLine.Quote(arg, true));
        }

        [Test]
        public void WindowsBatchFilesRunThroughCmd()
        {
            var install = new BridgeInstall
            {
                Kind = BridgeKind.Npx,
                FileName = @"C:\Program Files\nodejs\npx.cmd",
                LeadingArgs = new[] { "-y", "unity-mcp-bridge@0.1.0" },
                ThroughCmd = true,
            };
            var command = BridgeLocator.SetupCommand(install, "cursor", @"C:\Games\R&D Project");
            Assert.AreEqual("cmd.exe", command.FileName);
            Assert.AreEqual("/d /s /c \"\"C:\\Program Files\\nodejs\\npx.cmd\" -y unity-mcp-bridge@0.1.0 --project \"C:\\Games\\R&D Project\" setup cursor --via npx\"", command.Arguments);
            Assert.AreEqual("\"a&b\"", CommandLine.QuoteForCmd("a&b"));
        }

        /// <summary>Answers every run as a bridge of version 0.1.0 and remembers what it was asked.</summary>
        sealed class RecordingRunner : IProcessRunner
        {
            public readonly List<string> Runs = new List<string>();

            public ProcessResult Run(string fileName, string arguments, TimeSpan timeout)
            {
                Runs.Add(fileName + " " + arguments);
                return new ProcessResult { Output = "unity-mcp-bridge 0.1.0\r\n" };
            }
        }

        [Test]
        public void OnWindowsTheExeComesFirstAndAnNpmShimRunsThroughCmd()
        {
            // Windows' rules on this machine's file system: PATH split by ';', entries may be quoted.
            File.WriteAllText(Path.Combine(Directory.CreateDirectory(Dir("npm")).FullName, "unity-mcp-bridge.cmd"), "@echo off");
            File.WriteAllText(Path.Combine(Dir("npm"), "unity-mcp-bridge"), "#!/bin/sh"); // npm's sh shim: not for Windows
            File.WriteAllText(Path.Combine(Directory.CreateDirectory(Dir("node")).FullName, "npx.cmd"), "@echo off");
            File.WriteAllText(Path.Combine(Dir("node"), "npx"), "#!/bin/sh");
            var runner = new RecordingRunner();
            var env = new BridgeEnvironment { PathVariable = ";\"" + Dir("npm") + "\";" + Dir("node"), Project = project, IsWindows = true, PackageVersion = "0.1.0", Runner = runner };
            var found = BridgeLocator.FindAll(env);
            CollectionAssert.AreEqual(new[] { BridgeKind.OnPath, BridgeKind.Npx }, found.Select(f => f.Kind).ToArray(), string.Join("\n", found));
            Assert.AreEqual(Path.Combine(Dir("npm"), "unity-mcp-bridge.cmd"), found[0].FileName);
            Assert.IsTrue(found[0].ThroughCmd);
            Assert.AreEqual("0.1.0", found[0].Version);
            Assert.AreEqual(Path.Combine(Dir("node"), "npx.cmd"), found[1].FileName);
            Assert.IsTrue(found[1].ThroughCmd);
            CollectionAssert.AreEqual(new[] { "cmd.exe /d /s /c \"" + CommandLine.QuoteForCmd(found[0].FileName) + " --version\"" }, runner.Runs, "npx is not run");

            File.WriteAllText(Path.Combine(Dir("node"), "unity-mcp-bridge.exe"), "MZ");
            File.WriteAllText(Path.Combine(Dir("npm"), "unity-mcp-bridge.exe"), "MZ");
            var exe = BridgeLocator.FindAll(env)[0];
            Assert.AreEqual(Path.Combine(Dir("npm"), "unity-mcp-bridge.exe"), exe.FileName, "within a folder, .exe before .cmd");
            Assert.IsFalse(exe.ThroughCmd);
        }

        [Test]
        public void TheRunnerReadsBothPipesAndReportsWhatCannotStart()
        {
            var noisy = Script(Dir("bin"), "noisy", "i=0; while [ $i -lt 2000 ]; do echo 'some output to fill a pipe'; echo 'and its errors' >&2; i=$((i+1)); done; exit 4");
            var result = ProcessRunner.Instance.Run(noisy, "", TimeSpan.FromSeconds(20));
            Assert.IsFalse(result.TimedOut);
            Assert.AreEqual(4, result.ExitCode);
            Assert.AreEqual(2000, result.Output.Split('\n').Count(l => l.Length > 0));
            Assert.AreEqual(2000, result.Errors.Split('\n').Count(l => l.Length > 0));
            var missing = ProcessRunner.Instance.Run(Path.Combine(root, "no-such-program"), "", TimeSpan.FromSeconds(5));
            Assert.IsNotNull(missing.StartError);
        }
    }
}

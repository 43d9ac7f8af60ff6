// Downloading the bridge from a fake release served over real HTTP
// (HttpListener on 127.0.0.1): the asset is a /bin/sh script that prints a
// version, SHA256SUMS its checksum. Checked: the happy path, each refusal
// (checksum, missing line, 404, refused connection, wrong version, no
// target), that a refusal leaves nothing behind, and that no continuation
// needs the calling thread's SynchronizationContext (Unity's main thread).

using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using UnityMcp.Core;

namespace UnityMcp.Core.Tests
{
    /// <summary>A release on 127.0.0.1: path → bytes; other paths 404; "hang" paths never answer.</summary>
    sealed class FakeRelease : IDisposable
    {
        readonly HttpListener listener = new HttpListener();
        readonly TaskCompletionSource<bool> closing = new TaskCompletionSource<bool>();
        public readonly ConcurrentDictionary<string, byte[]> Files = new ConcurrentDictionary<string, byte[]>();
        public readonly ConcurrentDictionary<string, bool> Hang = new ConcurrentDictionary<string, bool>();
        /// <summary>path → where a 302 sends it (GitHub answers a release asset with a redirect to its storage host).</summary>
        public readonly ConcurrentDictionary<string, string> Redirects = new ConcurrentDictionary<string, string>();
        public readonly ConcurrentQueue<string> Requests = new ConcurrentQueue<string>();
        public readonly string BaseUrl;

        public FakeRelease()
        {
            for (var attempt = 0; ; attempt++)
            {
                var port = FreePort();
                listener.Prefixes.Clear();
                listener.Prefixes.Add("http://127.0.0.1:" + port + "/");
                try
                {
                    listener.Start();
                    BaseUrl = "http://127.0.0.1:" + port + "/releases/download/";
                    break;
                }
                catch (HttpListenerException) when (attempt < 5)
                {
                    // Taken in the meantime: another port.
                }
            }
            Task.Run(Serve);
        }

        internal static int FreePort()
        {
            var probe = new TcpListener(IPAddress.Loopback, 0);
            probe.Start();
            var port = ((IPEndPoint)probe.LocalEndpoint).Port;
            probe.Stop();
            return port;
        }

        async Task Serve()
        {
            while (true)
            {
                HttpListenerContext context;
                try
                {
                    context = await listener.GetContextAsync().ConfigureAwait(false);
                }
                catch (Exception e) when (e is HttpListenerException || e is ObjectDisposedException || e is InvalidOperationException)
                {
                    return;
                }
                _ = Task.Run(() => Answer(context));
            }
        }

        async Task Answer(HttpListenerContext context)
        {
            var path = context.Request.Url.AbsolutePath;
            Requests.Enqueue(path);
            try
            {
                if (Hang.ContainsKey(path))
                {
                    await closing.Task.ConfigureAwait(false);
                    context.Response.Abort();
                    return;
                }
                string location;
                if (Redirects.TryGetValue(path, out location))
                {
                    context.Response.StatusCode = 302;
                    context.Response.RedirectLocation = location;
                    context.Response.Close();
                    return;
                }
                byte[] body;
                if (!Files.TryGetValue(path, out body))
                {
                    context.Response.StatusCode = 404;
                    context.Response.Close();
                    return;
                }
                context.Response.StatusCode = 200;
                context.Response.ContentLength64 = body.Length;
                await context.Response.OutputStream.WriteAsync(body, 0, body.Length).ConfigureAwait(false);
                context.Response.Close();
            }
            catch (Exception e) when (e is HttpListenerException || e is ObjectDisposedException || e is IOException)
            {
                // The client went away.
            }
        }

        public void Dispose()
        {
            closing.TrySetResult(true);
            listener.Close();
        }
    }

    [TestFixture]
    public class BridgeDownloadTests
    {
        const string Version = "0.1.0";
        static readonly BridgePlatform Linux = new BridgePlatform { Os = "linux", Arch = "x64" };
        const string Asset = "unity-mcp-bridge-0.1.0-x86_64-unknown-linux-musl";

        string root;
        string project;
        FakeRelease release;

        [SetUp]
        public void Start()
        {
            root = Path.Combine(Path.GetTempPath(), "unity-mcp-download-" + Guid.NewGuid().ToString("N"));
            project = Path.Combine(root, "My Project");
            Directory.CreateDirectory(project);
            release = new FakeRelease();
        }

        [TearDown]
        public void Stop()
        {
            release.Dispose();
            Directory.Delete(root, true);
        }

        static byte[] BridgeScript(string version) => Encoding.UTF8.GetBytes("#!/bin/sh\necho 'unity-mcp-bridge " + version + "'\n");

        static string Sha256(byte[] bytes)
        {
            using (var sha = SHA256.Create())
            {
                return string.Concat(sha.ComputeHash(bytes).Select(b => b.ToString("x2")));
            }
        }

        /// <summary>Publishes v0.1.0 with <paramref name="asset"/> and a SHA256SUMS line for it (of <paramref name="listed"/>, by default the asset).</summary>
        void Publish(byte[] asset, byte[] listed = null, string sums = null)
        {
            release.Files["/releases/download/v0.1.0/" + Asset] = asset;
            release.Files["/releases/download/v0.1.0/SHA256SUMS"] = Encoding.UTF8.GetBytes(sums ??
                Sha256(Encoding.UTF8.GetBytes("another asset")) + "  unity-mcp-bridge-0.1.0-x86_64-pc-windows-msvc.exe\n" +
                Sha256(listed ?? asset) + "  " + Asset + "\n");
        }

        BridgeDownloadOptions Options() => new BridgeDownloadOptions
        {
            Project = project,
            Version = Version,
            Platform = Linux,
            BaseUrl = release.BaseUrl,
            Timeout = TimeSpan.FromSeconds(30),
        };

        string Destination => BridgeLocator.DownloadedPath(project, Version, false);

        BridgeDownloadException Fails(BridgeDownloadOptions options)
        {
            var task = BridgeDownload.InstallAsync(options, CancellationToken.None);
            try
            {
                Assert.IsTrue(task.Wait(TimeSpan.FromSeconds(30)), "the download did not end");
            }
            catch (AggregateException e) when (e.InnerException is BridgeDownloadException)
            {
                return (BridgeDownloadException)e.InnerException;
            }
            Assert.Fail("the download succeeded: " + task.Result);
            return null;
        }

        /// <summary>Every file under the project's Library (temporary files included).</summary>
        string[] LibraryFiles() =>
            Directory.Exists(Path.Combine(project, "Library")) ? Directory.GetFiles(Path.Combine(project, "Library"), "*", SearchOption.AllDirectories) : new string[0];

        [Test]
        public void TheBinaryIsDownloadedVerifiedAndInstalled()
        {
            Publish(BridgeScript(Version));
            var progress = new List<long>();
            var path = BridgeDownload.InstallAsync(Options(), CancellationToken.None, (received, total) => progress.Add(received)).Result;

            Assert.AreEqual(Destination, path);
            StringAssert.EndsWith("Library/UnityMcpBridge/bin/0.1.0/unity-mcp-bridge", path);
            CollectionAssert.AreEqual(BridgeScript(Version), File.ReadAllBytes(path));
            Assert.IsTrue(BridgeLocator.IsRunnable(path, false), "executable");
            CollectionAssert.AreEqual(new[] { path }, LibraryFiles(), "nothing else left");
            CollectionAssert.AreEqual(new[] { "/releases/download/v0.1.0/SHA256SUMS", "/releases/download/v0.1.0/" + Asset }, release.Requests.ToArray());
            Assert.AreEqual(BridgeScript(Version).Length, progress.Last());

            var found = BridgeLocator.FindAll(new BridgeEnvironment { Project = project, PackageVersion = Version });
            Assert.AreEqual(BridgeKind.Downloaded, found.Single().Kind);
            Assert.AreEqual(Version, found.Single().Version);
        }

        [Test]
        public void RedirectsAreFollowedAsGitHubSendsThem()
        {
            // GitHub answers /releases/download/… with a 302 to a signed URL
            // on another host; here, another path of the same server.
            var asset = BridgeScript(Version);
            Publish(asset);
            foreach (var name in new[] { "SHA256SUMS", Asset })
            {
                var original = "/releases/download/v0.1.0/" + name;
                var stored = "/storage/" + Guid.NewGuid().ToString("N");
                byte[] body;
                Assert.IsTrue(release.Files.TryRemove(original, out body));
                release.Files[stored] = body;
                release.Redirects[original] = release.BaseUrl.Replace("/releases/download/", stored + "?response-content-disposition=attachment");
            }

            Assert.AreEqual(Destination, BridgeDownload.InstallAsync(Options(), CancellationToken.None).Result);
            CollectionAssert.AreEqual(asset, File.ReadAllBytes(Destination));
            Assert.AreEqual(4, release.Requests.Count, "each file asked for, then fetched where it was sent: " + string.Join(", ", release.Requests));
        }

        [Test]
        public void SumsWithCrlfAndBinaryMarksAreRead()
        {
            var asset = BridgeScript(Version);
            Publish(asset, sums: "# checksums\r\n" + Sha256(asset).ToUpperInvariant() + " *" + Asset + "\r\n");
            Assert.AreEqual(Destination, BridgeDownload.InstallAsync(Options(), CancellationToken.None).Result);
        }

        [TestCase("aa", null)]
        [TestCase("{0}  {1}\n", "{0}")]
        [TestCase("{0} *{1}\r\n", "{0}")]
        [TestCase("{0}  {1}.exe\n", null)]
        [TestCase("{0}  other-{1}\n{0}  {1}x\n", null)]
        [TestCase("{0} {1}\n", null)]
        [TestCase("zz{0}  {1}\n", null)]
        public void ChecksumLines(string format, string expected)
        {
            var hash = new string('a', 62) + "F0";
            var sums = string.Format(format, hash, Asset);
            Assert.AreEqual(expected == null ? null : string.Format(expected, hash).ToLowerInvariant(), BridgeRelease.FindChecksum(sums, Asset));
        }

        [Test]
        public void SumsWrittenBySha256sumAsTheReleaseDoesAreRead()
        {
            // The release workflow runs `sha256sum unity-mcp-bridge-* > SHA256SUMS`
            // in the folder of the assets: coreutils' format, not ours.
            var assets = Path.Combine(root, "assets");
            Directory.CreateDirectory(assets);
            var asset = BridgeScript(Version);
            File.WriteAllBytes(Path.Combine(assets, Asset), asset);
            File.WriteAllBytes(Path.Combine(assets, "unity-mcp-bridge-0.1.0-x86_64-pc-windows-msvc.exe"), Encoding.UTF8.GetBytes("another"));
            var sha256sum = ProcessRunner.Instance.Run(
                "/bin/sh", "-c " + CommandLine.Quote("cd " + CommandLine.Quote(assets, false) + " && sha256sum unity-mcp-bridge-*", false), TimeSpan.FromSeconds(10));
            Assert.AreEqual(0, sha256sum.ExitCode, sha256sum.StartError + sha256sum.Errors);
            StringAssert.Contains("  " + Asset + "\n", sha256sum.Output);
            Publish(asset, sums: sha256sum.Output);

            Assert.AreEqual(Destination, BridgeDownload.InstallAsync(Options(), CancellationToken.None).Result);
        }

        [Test]
        public void AChecksumMismatchIsRefusedAndLeavesNothing()
        {
            var asset = BridgeScript(Version);
            var listed = BridgeScript("0.1.0 but another build");
            Publish(asset, listed);
            var error = Fails(Options());
            Assert.AreEqual("checksum mismatch for " + Asset + ": expected " + Sha256(listed) + ", got " + Sha256(asset), error.Message);
            Assert.IsFalse(File.Exists(Destination));
            CollectionAssert.IsEmpty(LibraryFiles(), "no temporary file left");
            Assert.IsFalse(Directory.Exists(BridgeLocator.DownloadFolder(project, Version)), "the folder it made is gone");
        }

        [Test]
        public void AnAssetMissingFromTheSumsIsRefusedBeforeDownloading()
        {
            Publish(BridgeScript(Version), sums: Sha256(BridgeScript(Version)) + "  unity-mcp-bridge-0.1.0-aarch64-apple-darwin\n");
            var error = Fails(Options());
            StringAssert.Contains("lists no checksum for " + Asset, error.Message);
            StringAssert.Contains(release.BaseUrl + "v0.1.0/SHA256SUMS", error.Message);
            CollectionAssert.DoesNotContain(release.Requests.ToArray(), "/releases/download/v0.1.0/" + Asset);
            CollectionAssert.IsEmpty(LibraryFiles());
        }

        [Test]
        public void AMissingReleaseIsAnHttpErrorNamingTheUrl()
        {
            var error = Fails(Options());
            StringAssert.Contains("GET " + release.BaseUrl + "v0.1.0/SHA256SUMS failed: HTTP 404", error.Message);
            release.Files["/releases/download/v0.1.0/SHA256SUMS"] = Encoding.UTF8.GetBytes(Sha256(BridgeScript(Version)) + "  " + Asset + "\n");
            error = Fails(Options());
            StringAssert.Contains("GET " + release.BaseUrl + "v0.1.0/" + Asset + " failed: HTTP 404", error.Message);
            CollectionAssert.IsEmpty(LibraryFiles());
        }

        [Test]
        public void ARefusedConnectionNamesTheUrl()
        {
            var options = Options();
            options.BaseUrl = "http://127.0.0.1:" + FakeRelease.FreePort() + "/releases/download/";
            var error = Fails(options);
            StringAssert.StartsWith("GET " + options.BaseUrl + "v0.1.0/SHA256SUMS failed: ", error.Message);
        }

        [Test]
        public void ABinaryReportingAnotherVersionIsRefusedAndRemoved()
        {
            Publish(BridgeScript("0.0.9"));
            var error = Fails(Options());
            Assert.AreEqual("the downloaded " + Asset + " reports version 0.0.9, expected 0.1.0", error.Message);
            CollectionAssert.IsEmpty(LibraryFiles());
        }

        [Test]
        public void ABadDownloadDoesNotReplaceTheInstalledBridge()
        {
            LocatorBridge(BridgeLocator.DownloadFolder(project, Version));
            var before = File.ReadAllBytes(Destination);
            Publish(BridgeScript("6.6.6"));
            StringAssert.Contains("reports version 6.6.6", Fails(Options()).Message);
            CollectionAssert.AreEqual(before, File.ReadAllBytes(Destination), "the clients set up with it still start it");
            CollectionAssert.AreEqual(new[] { Destination }, LibraryFiles());

            Publish(BridgeScript(Version));
            Assert.AreEqual(Destination, BridgeDownload.InstallAsync(Options(), CancellationToken.None).Result);
            CollectionAssert.AreEqual(BridgeScript(Version), File.ReadAllBytes(Destination), "a good one replaces it");
        }

        void LocatorBridge(string dir) => BridgeLocatorTests.Script(dir, "unity-mcp-bridge", "# installed before\necho 'unity-mcp-bridge 0.1.0'");

        [Test]
        public void AnUnsupportedPlatformSaysHowElseToGetTheBridge()
        {
            var options = Options();
            options.Platform = new BridgePlatform { Os = "freebsd", Arch = "x64" };
            var error = Fails(options);
            Assert.AreEqual("no prebuilt bridge for freebsd/x64; install it with npx/uvx or build it with cargo (cargo install --locked --path bridge, in a checkout of the repository)", error.Message);
            CollectionAssert.IsEmpty(release.Requests.ToArray());
        }

        [TestCase("windows", "x64", "unity-mcp-bridge-0.1.0-x86_64-pc-windows-msvc.exe")]
        [TestCase("macos", "x64", "unity-mcp-bridge-0.1.0-x86_64-apple-darwin")]
        [TestCase("macos", "arm64", "unity-mcp-bridge-0.1.0-aarch64-apple-darwin")]
        [TestCase("linux", "x64", "unity-mcp-bridge-0.1.0-x86_64-unknown-linux-musl")]
        [TestCase("linux", "arm64", "unity-mcp-bridge-0.1.0-aarch64-unknown-linux-musl")]
        public void AssetNames(string os, string arch, string asset)
        {
            Assert.AreEqual(asset, BridgeRelease.AssetName("0.1.0", new BridgePlatform { Os = os, Arch = arch }));
            Assert.AreEqual("https://github.com/unity-mcp-bridge/unity-mcp-bridge/releases/download/v0.1.0/", BridgeRelease.ReleaseUrl(BridgeRelease.DefaultBaseUrl, "0.1.0"));
        }

        [TestCase("windows", "arm64")]
        [TestCase("linux", "x86")]
        public void PlatformsWithoutABuild(string os, string arch)
        {
            var platform = new BridgePlatform { Os = os, Arch = arch };
            Assert.IsNull(BridgeRelease.TargetFor(platform));
            var error = Assert.Throws<BridgeDownloadException>(() => BridgeRelease.AssetName("0.1.0", platform));
            StringAssert.StartsWith("no prebuilt bridge for " + os + "/" + arch + ";", error.Message);
        }

        [Test]
        public void ADownloadThatStallsTimesOutAndLeavesNothing()
        {
            Publish(BridgeScript(Version));
            release.Hang["/releases/download/v0.1.0/" + Asset] = true;
            var options = Options();
            options.Timeout = TimeSpan.FromSeconds(1.5);
            var watch = Stopwatch.StartNew();
            var error = Fails(options);
            Assert.Less(watch.Elapsed.TotalSeconds, 15);
            StringAssert.Contains("did not finish within 1.5 s", error.Message);
            CollectionAssert.IsEmpty(LibraryFiles());
        }

        [Test]
        public void ACancelledDownloadStopsAndLeavesNothing()
        {
            Publish(BridgeScript(Version));
            release.Hang["/releases/download/v0.1.0/" + Asset] = true;
            var job = new BridgeDownloadJob();
            job.Start(Options());
            Assert.AreEqual(BridgeDownloadState.Downloading, job.State);
            StringAssert.StartsWith("downloading", job.Describe());
            var deadline = DateTime.UtcNow.AddSeconds(10);
            while (!release.Requests.Contains("/releases/download/v0.1.0/" + Asset) && DateTime.UtcNow < deadline)
            {
                Thread.Sleep(20);
            }
            job.Cancel();
            Assert.IsTrue(job.Running.Wait(TimeSpan.FromSeconds(10)));
            Assert.IsNull(job.Running.Result);
            Assert.AreEqual(BridgeDownloadState.Failed, job.State);
            Assert.AreEqual("the download was cancelled", job.Message);
            CollectionAssert.IsEmpty(LibraryFiles());
        }

        [Test]
        public void TheJobReportsSuccessForTheWindowToPoll()
        {
            Publish(BridgeScript(Version));
            var job = new BridgeDownloadJob();
            Assert.AreEqual(BridgeDownloadState.Idle, job.State);
            job.Start(Options());
            Assert.IsTrue(job.Running.Wait(TimeSpan.FromSeconds(30)));
            Assert.AreEqual(BridgeDownloadState.Installed, job.State, job.Message);
            Assert.AreEqual(Destination, job.Message);
            StringAssert.StartsWith("verified (SHA-256 and version) and installed at ", job.Describe());
            Assert.AreEqual(BridgeScript(Version).Length, job.Received);
        }

        /// <summary>
        /// Like Unity's main thread while it waits: work posted to it is only
        /// queued, never run. A continuation that needs it never runs.
        /// </summary>
        sealed class BlockedMainThread : SynchronizationContext
        {
            public int Posted;
            public override void Post(SendOrPostCallback d, object state) => Interlocked.Increment(ref Posted);
            public override void Send(SendOrPostCallback d, object state) => throw new InvalidOperationException("Send on the main thread");
        }

        [Test]
        public void NoContinuationWaitsForTheCallersThread()
        {
            Publish(BridgeScript(Version));
            var previous = SynchronizationContext.Current;
            var main = new BlockedMainThread();
            SynchronizationContext.SetSynchronizationContext(main);
            try
            {
                var task = BridgeDownload.InstallAsync(Options(), CancellationToken.None);
                Assert.IsTrue(task.Wait(TimeSpan.FromSeconds(30)), "deadlock: a continuation was posted to the blocked thread (" + main.Posted + " posted)");
                Assert.AreEqual(Destination, task.Result);
                Assert.AreEqual(0, main.Posted);
            }
            finally
            {
                SynchronizationContext.SetSynchronizationContext(previous);
            }
        }
    }
}

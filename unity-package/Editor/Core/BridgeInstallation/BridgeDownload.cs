// Downloads this platform's unity-mcp-bridge release binary into the
// project (Library/UnityMcpBridge/bin/<version>/), verified: the release's
// SHA256SUMS names the asset's SHA-256, the download must match it, and the
// program must then report the expected version before it is put in place.
// Whatever fails leaves nothing behind (no temporary file, no binary).
//
// Every await here uses ConfigureAwait(false): Unity's main thread has a
// SynchronizationContext that only runs posted work when the Editor ticks,
// so a continuation posted back to it while the main thread waits would
// deadlock. The window starts the work on a worker (BridgeDownloadJob) and
// polls its state; it never waits on it.
//
// HTTP goes through HttpWebRequest (System.dll), not HttpClient: under
// Unity's .NET Framework API level System.Net.Http.dll is not referenced
// unless the project adds a csc.rsp, and Debian's mono ships it separately.

using System;
using System.Globalization;
using System.IO;
using System.Net;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace UnityMcp.Core
{
    /// <summary>A download that failed, with a message for people.</summary>
    public sealed class BridgeDownloadException : Exception
    {
        public BridgeDownloadException(string message) : base(message) { }
        public BridgeDownloadException(string message, Exception inner) : base(message, inner) { }
    }

    /// <summary>An operating system and processor, as the release names them.</summary>
    public sealed class BridgePlatform
    {
        /// <summary>windows, macos, linux, or another OS's description.</summary>
        public string Os = "";
        /// <summary>x64, arm64, or another architecture's name.</summary>
        public string Arch = "";

        public bool IsWindows => Os == "windows";

        /// <summary>This machine (RuntimeInformation).</summary>
        public static BridgePlatform Current()
        {
            var os = RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "windows"
                : RuntimeInformation.IsOSPlatform(OSPlatform.OSX) ? "macos"
                : RuntimeInformation.IsOSPlatform(OSPlatform.Linux) ? "linux"
                : RuntimeInformation.OSDescription;
            var arch = RuntimeInformation.OSArchitecture;
            var name = arch == Architecture.X64 ? "x64" : arch == Architecture.Arm64 ? "arm64" : arch.ToString().ToLowerInvariant();
            return new BridgePlatform { Os = os, Arch = name };
        }

        public override string ToString() => Os + "/" + Arch;
    }

    /// <summary>The release layout (the project's release workflow).</summary>
    public static class BridgeRelease
    {
        /// <summary>Releases are at &lt;this&gt;v&lt;version&gt;/&lt;asset&gt;.</summary>
        public const string DefaultBaseUrl = "https://github.com/unity-mcp-bridge/unity-mcp-bridge/releases/download/";

        /// <summary>The checksums file beside the assets (sha256sum's format).</summary>
        public const string SumsName = "SHA256SUMS";

        /// <summary>The Rust target built for <paramref name="platform"/>, or null when none is.</summary>
        public static string TargetFor(BridgePlatform platform)
        {
            switch (platform.Os + "/" + platform.Arch)
            {
                case "windows/x64": return "x86_64-pc-windows-msvc";
                case "macos/x64": return "x86_64-apple-darwin";
                case "macos/arm64": return "aarch64-apple-darwin";
                case "linux/x64": return "x86_64-unknown-linux-musl";
                case "linux/arm64": return "aarch64-unknown-linux-musl";
                default: return null;
            }
        }

        /// <summary>The target, or a BridgeDownloadException saying there is none.</summary>
        public static string Target(BridgePlatform platform) =>
            TargetFor(platform) ?? throw new BridgeDownloadException(
                "no prebuilt bridge for " + platform + "; install it with npx/uvx or build it with cargo (cargo install --locked --path bridge, in a checkout of the repository)");

        /// <summary>unity-mcp-bridge-&lt;version&gt;-&lt;target&gt;[.exe].</summary>
        public static string AssetName(string version, BridgePlatform platform) =>
            BridgeLocator.ProgramName + "-" + version + "-" + Target(platform) + (platform.IsWindows ? ".exe" : "");

        /// <summary>&lt;base&gt;v&lt;version&gt;/</summary>
        public static string ReleaseUrl(string baseUrl, string version) => baseUrl.TrimEnd('/') + "/v" + version + "/";

        /// <summary>
        /// The SHA-256 that <paramref name="sums"/> (lines `&lt;64 hex&gt;  &lt;name&gt;`,
        /// or `&lt;64 hex&gt; *&lt;name&gt;` for binary mode; LF or CRLF) gives
        /// <paramref name="asset"/>, lower case; null when it lists none.
        /// </summary>
        public static string FindChecksum(string sums, string asset)
        {
            foreach (var raw in (sums ?? "").Split('\n'))
            {
                var line = raw.TrimEnd('\r');
                if (line.Length < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*'))
                {
                    continue;
                }
                var hash = line.Substring(0, 64);
                if (IsHex(hash) && line.Substring(66) == asset)
                {
                    return hash.ToLowerInvariant();
                }
            }
            return null;
        }

        static bool IsHex(string text)
        {
            foreach (var c in text)
            {
                if (!Uri.IsHexDigit(c))
                {
                    return false;
                }
            }
            return true;
        }
    }

    /// <summary>What to download, from where, to where.</summary>
    public sealed class BridgeDownloadOptions
    {
        /// <summary>The Unity project: the binary goes to Library/UnityMcpBridge/bin/&lt;version&gt;/.</summary>
        public string Project = "";
        /// <summary>The bridge version (this package's).</summary>
        public string Version = "";
        public BridgePlatform Platform = BridgePlatform.Current();
        public string BaseUrl = BridgeRelease.DefaultBaseUrl;
        /// <summary>The whole download, checks included.</summary>
        public TimeSpan Timeout = TimeSpan.FromMinutes(5);
        /// <summary>How long the downloaded program may take to say its version.</summary>
        public TimeSpan VersionTimeout = TimeSpan.FromSeconds(10);
        /// <summary>A larger asset is refused.</summary>
        public long MaxBytes = 256L * 1024 * 1024;
        public IProcessRunner Runner = ProcessRunner.Instance;
    }

    /// <summary>Downloads, verifies and installs the bridge.</summary>
    public static class BridgeDownload
    {
        const int MaxSumsBytes = 1024 * 1024;

        /// <summary>
        /// Downloads the asset for <see cref="BridgeDownloadOptions.Platform"/>,
        /// checks it against SHA256SUMS and its version, and installs it;
        /// returns its path. Throws BridgeDownloadException (with a message
        /// for people) or OperationCanceledException when
        /// <paramref name="cancel"/> fires. Run it off the main thread.
        /// </summary>
        public static async Task<string> InstallAsync(BridgeDownloadOptions options, CancellationToken cancel, Action<long, long> progress = null)
        {
            var asset = BridgeRelease.AssetName(options.Version, options.Platform);
            var release = BridgeRelease.ReleaseUrl(options.BaseUrl, options.Version);
            var folder = BridgeLocator.DownloadFolder(options.Project, options.Version);
            var destination = BridgeLocator.DownloadedPath(options.Project, options.Version, options.Platform.IsWindows);
            var createdFolder = !Directory.Exists(folder);
            string temporary = null;
            using (var deadline = new CancellationTokenSource(options.Timeout))
            using (var linked = CancellationTokenSource.CreateLinkedTokenSource(cancel, deadline.Token))
            {
                try
                {
                    var token = linked.Token;
                    var sums = Encoding.UTF8.GetString(await FetchBytes(release + BridgeRelease.SumsName, MaxSumsBytes, token).ConfigureAwait(false));
                    var expected = BridgeRelease.FindChecksum(sums, asset)
                        ?? throw new BridgeDownloadException(release + BridgeRelease.SumsName + " lists no checksum for " + asset);

                    Directory.CreateDirectory(folder);
                    temporary = Path.Combine(folder, "." + BridgeLocator.ProgramName + "-" + Guid.NewGuid().ToString("N") + ".download");
                    var actual = await FetchToFile(release + asset, temporary, options.MaxBytes, progress, token).ConfigureAwait(false);
                    if (!string.Equals(actual, expected, StringComparison.OrdinalIgnoreCase))
                    {
                        throw new BridgeDownloadException("checksum mismatch for " + asset + ": expected " + expected + ", got " + actual);
                    }
                    if (!options.Platform.IsWindows)
                    {
                        MakeExecutable(options.Runner, temporary);
                    }
                    // Checked before it is put in place: the clients set up
                    // with a downloaded bridge start it by this path, so a
                    // bad download never replaces a good one.
                    CheckVersion(options.Runner, temporary, asset, options.Version, options.VersionTimeout);
                    token.ThrowIfCancellationRequested();
                    MoveIntoPlace(temporary, destination);
                    temporary = null;
                    return destination;
                }
                catch (OperationCanceledException) when (deadline.IsCancellationRequested && !cancel.IsCancellationRequested)
                {
                    throw new BridgeDownloadException("downloading " + asset + " from " + release + " did not finish within " + Seconds(options.Timeout));
                }
                finally
                {
                    if (temporary != null)
                    {
                        TryDelete(temporary);
                        if (createdFolder)
                        {
                            TryDeleteEmptyFolder(folder);
                        }
                    }
                }
            }
        }

        static string Seconds(TimeSpan span) => span.TotalSeconds.ToString("0.#", CultureInfo.InvariantCulture) + " s";

        /// <summary>A GET of <paramref name="url"/>: the body, at most <paramref name="limit"/> bytes.</summary>
        static Task<byte[]> FetchBytes(string url, int limit, CancellationToken token) =>
            Fetch(url, token, async (body, length) =>
            {
                using (var memory = new MemoryStream())
                {
                    var buffer = new byte[16384];
                    int read;
                    while ((read = await body.ReadAsync(buffer, 0, buffer.Length, token).ConfigureAwait(false)) > 0)
                    {
                        memory.Write(buffer, 0, read);
                        if (memory.Length > limit)
                        {
                            throw new BridgeDownloadException(url + " is larger than " + limit + " bytes");
                        }
                    }
                    return memory.ToArray();
                }
            });

        /// <summary>A GET of <paramref name="url"/> into a new file; returns the body's SHA-256 (lower-case hex).</summary>
        static Task<string> FetchToFile(string url, string path, long limit, Action<long, long> progress, CancellationToken token) =>
            Fetch(url, token, async (body, length) =>
            {
                using (var sha = SHA256.Create())
                using (var file = new FileStream(path, FileMode.CreateNew, FileAccess.Write))
                {
                    var buffer = new byte[81920];
                    long received = 0;
                    int read;
                    progress?.Invoke(0, length);
                    while ((read = await body.ReadAsync(buffer, 0, buffer.Length, token).ConfigureAwait(false)) > 0)
                    {
                        received += read;
                        if (received > limit)
                        {
                            throw new BridgeDownloadException(url + " is larger than " + limit + " bytes");
                        }
                        sha.TransformBlock(buffer, 0, read, null, 0);
                        await file.WriteAsync(buffer, 0, read, token).ConfigureAwait(false);
                        progress?.Invoke(received, length);
                    }
                    sha.TransformFinalBlock(new byte[0], 0, 0);
                    await file.FlushAsync(token).ConfigureAwait(false);
                    return Hex(sha.Hash);
                }
            });

        static string Hex(byte[] bytes)
        {
            var text = new StringBuilder(bytes.Length * 2);
            foreach (var b in bytes)
            {
                text.Append(b.ToString("x2", CultureInfo.InvariantCulture));
            }
            return text.ToString();
        }

        /// <summary>
        /// GETs <paramref name="url"/> (redirects followed: GitHub sends
        /// release assets from another host) and hands a 2xx body and its
        /// length (-1: unknown) to <paramref name="read"/>. A status, a
        /// refused connection or a name that does not resolve becomes a
        /// BridgeDownloadException naming the URL; <paramref name="token"/>
        /// aborts the request.
        /// </summary>
        static async Task<T> Fetch<T>(string url, CancellationToken token, Func<Stream, long, Task<T>> read)
        {
            Uri uri;
            if (!Uri.TryCreate(url, UriKind.Absolute, out uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps))
            {
                throw new BridgeDownloadException("cannot download " + url + ": not an http(s) URL");
            }
            token.ThrowIfCancellationRequested();
            var request = (HttpWebRequest)WebRequest.Create(uri);
            request.Method = "GET";
            request.AllowAutoRedirect = true;
            request.UserAgent = "unity-mcp-bridge-unity-package";
            if (uri.IsLoopback)
            {
                request.Proxy = null; // A proxy cannot reach this machine's loopback.
            }
            using (token.Register(() => request.Abort()))
            {
                try
                {
                    using (var response = (HttpWebResponse)await request.GetResponseAsync().ConfigureAwait(false))
                    {
                        var status = (int)response.StatusCode;
                        if (status < 200 || status > 299)
                        {
                            throw new BridgeDownloadException("GET " + url + " failed: HTTP " + status + " " + response.StatusDescription);
                        }
                        using (var body = response.GetResponseStream())
                        {
                            return await read(body, response.ContentLength).ConfigureAwait(false);
                        }
                    }
                }
                catch (Exception e) when (token.IsCancellationRequested && !(e is BridgeDownloadException))
                {
                    throw new OperationCanceledException("the download of " + url + " was stopped", e, token);
                }
                catch (WebException e)
                {
                    var response = e.Response as HttpWebResponse;
                    if (response != null)
                    {
                        var status = (int)response.StatusCode;
                        var description = response.StatusDescription;
                        response.Dispose();
                        throw new BridgeDownloadException("GET " + url + " failed: HTTP " + status + " " + description, e);
                    }
                    throw new BridgeDownloadException("GET " + url + " failed: " + e.Message, e);
                }
                catch (IOException e)
                {
                    throw new BridgeDownloadException("GET " + url + " failed while reading: " + e.Message, e);
                }
            }
        }

        /// <summary>chmod 755 (no managed API for modes in Unity's profile).</summary>
        static void MakeExecutable(IProcessRunner runner, string path)
        {
            var result = runner.Run("/bin/chmod", "755 " + CommandLine.Quote(path, CommandLine.WindowsRules), TimeSpan.FromSeconds(10));
            if (result.StartError != null || result.TimedOut || result.ExitCode != 0)
            {
                var why = result.StartError ?? (result.TimedOut ? "it did not finish" : "exit code " + result.ExitCode + " " + result.Errors.Trim());
                throw new BridgeDownloadException("could not make " + path + " executable with /bin/chmod: " + why);
            }
        }

        static void CheckVersion(IProcessRunner runner, string path, string asset, string expected, TimeSpan timeout)
        {
            var install = new BridgeInstall { Kind = BridgeKind.Downloaded, FileName = path, DisplayPath = path };
            BridgeLocator.ReadVersion(install, runner, timeout);
            if (install.Version == null)
            {
                throw new BridgeDownloadException("the downloaded " + asset + " does not run here: " + install.VersionProblem);
            }
            if (install.Version != expected)
            {
                throw new BridgeDownloadException("the downloaded " + asset + " reports version " + install.Version + ", expected " + expected);
            }
        }

        /// <summary>A rename within one folder: atomic where Unity runs (rename(2), MoveFileEx).</summary>
        static void MoveIntoPlace(string temporary, string destination)
        {
            try
            {
                if (File.Exists(destination))
                {
                    File.Replace(temporary, destination, null);
                }
                else
                {
                    File.Move(temporary, destination);
                }
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException)
            {
                throw new BridgeDownloadException("could not put the bridge in place at " + destination + " (is it running?): " + e.Message, e);
            }
        }

        static void TryDelete(string path)
        {
            try
            {
                File.Delete(path);
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException)
            {
                // Left: a hidden file in the project's Library, harmless.
            }
        }

        static void TryDeleteEmptyFolder(string path)
        {
            try
            {
                if (Directory.Exists(path) && Directory.GetFileSystemEntries(path).Length == 0)
                {
                    Directory.Delete(path);
                }
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException)
            {
                // Left empty.
            }
        }
    }

    public enum BridgeDownloadState { Idle, Downloading, Installed, Failed }

    /// <summary>
    /// One download at a time, run on a worker, for a window to poll: it
    /// reads State, Message and the byte counts each frame and never waits.
    /// </summary>
    public sealed class BridgeDownloadJob
    {
        readonly object gate = new object();
        CancellationTokenSource cancel;
        Task<string> running;
        volatile BridgeDownloadState state = BridgeDownloadState.Idle;
        volatile string message = "";
        long received;
        long total = -1;

        public BridgeDownloadState State => state;

        /// <summary>What happened: the installed path, the error, or "".</summary>
        public string Message => message;

        public long Received => Interlocked.Read(ref received);

        /// <summary>The asset's size, or -1 while unknown.</summary>
        public long Total => Interlocked.Read(ref total);

        /// <summary>The installed path, or null (failed, cancelled); for tests.</summary>
        public Task<string> Running => running;

        /// <summary>Starts a download unless one is under way; returns immediately.</summary>
        public void Start(BridgeDownloadOptions options)
        {
            lock (gate)
            {
                if (state == BridgeDownloadState.Downloading)
                {
                    return;
                }
                cancel?.Dispose();
                cancel = new CancellationTokenSource();
                Interlocked.Exchange(ref received, 0);
                Interlocked.Exchange(ref total, -1);
                message = "";
                state = BridgeDownloadState.Downloading;
                var token = cancel.Token;
                running = Task.Run(() => Run(options, token));
            }
        }

        public void Cancel()
        {
            lock (gate)
            {
                cancel?.Cancel();
            }
        }

        async Task<string> Run(BridgeDownloadOptions options, CancellationToken token)
        {
            try
            {
                var path = await BridgeDownload.InstallAsync(options, token, (r, t) =>
                {
                    Interlocked.Exchange(ref received, r);
                    Interlocked.Exchange(ref total, t);
                }).ConfigureAwait(false);
                Finish(BridgeDownloadState.Installed, path);
                return path;
            }
            catch (BridgeDownloadException e)
            {
                Finish(BridgeDownloadState.Failed, e.Message);
            }
            catch (OperationCanceledException)
            {
                Finish(BridgeDownloadState.Failed, "the download was cancelled");
            }
            catch (Exception e)
            {
                Finish(BridgeDownloadState.Failed, "the download failed: " + e.GetType().Name + ": " + e.Message);
            }
            return null;
        }

        void Finish(BridgeDownloadState end, string text)
        {
            message = text;
            state = end;
        }

        /// <summary>"downloading… 1.2 of 8.4 MB", "verified and installed at …", the error, or "".</summary>
        public string Describe()
        {
            switch (state)
            {
                case BridgeDownloadState.Downloading:
                    var t = Total;
                    return "downloading… " + Megabytes(Received) + (t > 0 ? " of " + Megabytes(t) : "") + " MB";
                case BridgeDownloadState.Installed:
                    return "verified (SHA-256 and version) and installed at " + message;
                case BridgeDownloadState.Failed:
                    return message;
                default:
                    return "";
            }
        }

        static string Megabytes(long bytes) => (bytes / (1024.0 * 1024.0)).ToString("0.0", CultureInfo.InvariantCulture);
    }
}

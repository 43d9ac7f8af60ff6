// Finds the unity-mcp-bridge programs this Editor can start, in order of
// preference: the one Window > Unity MCP downloaded into the project
// (Library/UnityMcpBridge/bin/<package version>/), the first on PATH (a
// cargo install, a release binary, an npm global install's shim), then npx
// (npx -y unity-mcp-bridge@<package version>). Each is asked its version
// (`--version`, with a deadline; a program that does not answer in time is
// killed); npx is never run here, since it may download the package. The
// environment (PATH, the project, the platform, the package version, how
// processes are run) is a value, so tests run on folders of fake programs.

using System;
using System.Collections.Generic;
using System.ComponentModel;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading.Tasks;

namespace UnityMcp.Core
{
    /// <summary>How a bridge was found.</summary>
    public enum BridgeKind
    {
        /// <summary>Downloaded by the window into Library/UnityMcpBridge/bin/&lt;version&gt;/.</summary>
        Downloaded,
        /// <summary>The first unity-mcp-bridge on PATH.</summary>
        OnPath,
        /// <summary>npx -y unity-mcp-bridge@&lt;package version&gt; (the npm package).</summary>
        Npx,
    }

    /// <summary>A program and its argument string, for ProcessStartInfo.</summary>
    public sealed class ProcessCommand
    {
        public string FileName = "";
        public string Arguments = "";

        public override string ToString() => Arguments.Length == 0 ? FileName : FileName + " " + Arguments;
    }

    /// <summary>One bridge the Editor can start.</summary>
    public sealed class BridgeInstall
    {
        public BridgeKind Kind;
        /// <summary>The program to start (an absolute path, as found).</summary>
        public string FileName = "";
        /// <summary>Arguments that come before the bridge's own (npx: -y unity-mcp-bridge@VERSION).</summary>
        public string[] LeadingArgs = new string[0];
        /// <summary>A Windows batch file (npx.cmd, an npm shim): started through cmd.exe.</summary>
        public bool ThroughCmd;
        /// <summary>Where it is, for people.</summary>
        public string DisplayPath = "";
        /// <summary>What `--version` said (npx: the pinned version), or null when unknown.</summary>
        public string Version;
        /// <summary>Why the version is unknown (when it is).</summary>
        public string VersionProblem;
        /// <summary>npx: the package has perhaps not been fetched yet (npx fetches it on first use).</summary>
        public bool NotYetFetched;

        /// <summary>The command that runs this bridge with <paramref name="args"/> after its leading arguments.</summary>
        public ProcessCommand Command(params string[] args)
        {
            var all = LeadingArgs.Concat(args).ToArray();
            if (ThroughCmd)
            {
                // cmd /s /c "<line>": cmd drops the first and the last quote
                // and runs the rest as typed, whatever quotes it holds.
                var line = string.Join(" ", new[] { FileName }.Concat(all).Select(CommandLine.QuoteForCmd));
                return new ProcessCommand { FileName = "cmd.exe", Arguments = "/d /s /c \"" + line + "\"" };
            }
            return new ProcessCommand { FileName = FileName, Arguments = CommandLine.Join(all, CommandLine.WindowsRules) };
        }

        public string KindName => Kind == BridgeKind.Downloaded ? "downloaded" : Kind == BridgeKind.OnPath ? "on PATH" : "npx";

        /// <summary>"0.1.0", "0.1.0 (pinned; npx fetches it on first use)" or "unknown (why)".</summary>
        public string VersionText =>
            Version == null ? "unknown" + (VersionProblem != null ? " (" + VersionProblem + ")" : "")
            : NotYetFetched ? Version + " (pinned; npx fetches it on first use)" : Version;

        public override string ToString() => KindName + ": " + DisplayPath + ", version " + VersionText;
    }

    /// <summary>What a finished (or stopped) process left.</summary>
    public sealed class ProcessResult
    {
        /// <summary>Why it could not be started (null: it was).</summary>
        public string StartError;
        /// <summary>It did not end within the deadline and was killed.</summary>
        public bool TimedOut;
        public int ExitCode;
        public string Output = "";
        public string Errors = "";
    }

    /// <summary>Runs a program to its end, or kills it at a deadline.</summary>
    public interface IProcessRunner
    {
        ProcessResult Run(string fileName, string arguments, TimeSpan timeout);
    }

    /// <summary>
    /// Runs real processes: stdin closed at once (a bridge too old to know a
    /// flag would otherwise wait on it as an MCP server), stdout and stderr
    /// read together; never waits past the deadline. Call it off Unity's main
    /// thread: it blocks until the process ends.
    /// </summary>
    public sealed class ProcessRunner : IProcessRunner
    {
        public static readonly ProcessRunner Instance = new ProcessRunner();

        public ProcessResult Run(string fileName, string arguments, TimeSpan timeout)
        {
            var start = new ProcessStartInfo(fileName, arguments)
            {
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                CreateNoWindow = true,
            };
            Process process;
            try
            {
                process = Process.Start(start);
            }
            catch (Exception e) when (e is Win32Exception || e is InvalidOperationException || e is IOException || e is UnauthorizedAccessException)
            {
                return new ProcessResult { StartError = e.Message };
            }
            if (process == null)
            {
                return new ProcessResult { StartError = "no process was started" };
            }
            using (process)
            {
                var watch = Stopwatch.StartNew();
                try
                {
                    process.StandardInput.Close();
                }
                catch (IOException)
                {
                    // It has already ended: fine.
                }
                // Both pipes read at once: one left full would stall the other.
                var output = process.StandardOutput.ReadToEndAsync();
                var errors = process.StandardError.ReadToEndAsync();
                if (!process.WaitForExit(Milliseconds(timeout)))
                {
                    Kill(process);
                    return new ProcessResult { TimedOut = true };
                }
                try
                {
                    // A child it left behind may hold the pipes open.
                    if (!Task.WaitAll(new Task[] { output, errors }, Milliseconds(timeout - watch.Elapsed)))
                    {
                        return new ProcessResult { TimedOut = true };
                    }
                }
                catch (AggregateException e)
                {
                    return new ProcessResult { StartError = "its output could not be read: " + e.InnerException?.Message };
                }
                process.WaitForExit();
                return new ProcessResult { ExitCode = process.ExitCode, Output = output.Result, Errors = errors.Result };
            }
        }

        static int Milliseconds(TimeSpan span) => (int)Math.Max(0, Math.Min(int.MaxValue, span.TotalMilliseconds));

        static void Kill(Process process)
        {
            try
            {
                process.Kill();
                process.WaitForExit(1000);
            }
            catch (Exception e) when (e is InvalidOperationException || e is Win32Exception || e is NotSupportedException)
            {
                // It ended in the meantime.
            }
        }
    }

    /// <summary>Where and how to look for bridges.</summary>
    public sealed class BridgeEnvironment
    {
        /// <summary>The PATH string.</summary>
        public string PathVariable = "";
        /// <summary>The Unity project folder.</summary>
        public string Project = "";
        public bool IsWindows;
        /// <summary>This package's version: the bridge version downloaded and pinned for npx.</summary>
        public string PackageVersion = "";
        public IProcessRunner Runner = ProcessRunner.Instance;
        /// <summary>How long `--version` may take (a first run on macOS can be slow while the binary is checked).</summary>
        public TimeSpan VersionTimeout = TimeSpan.FromSeconds(5);

        /// <summary>This machine's: its PATH and platform, real processes.</summary>
        public static BridgeEnvironment Current(string project, string packageVersion) => new BridgeEnvironment
        {
            PathVariable = Environment.GetEnvironmentVariable("PATH") ?? "",
            Project = project,
            IsWindows = RuntimeInformation.IsOSPlatform(OSPlatform.Windows),
            PackageVersion = packageVersion,
        };
    }

    /// <summary>Finds bridges and builds the commands that run them.</summary>
    public static class BridgeLocator
    {
        public const string ProgramName = "unity-mcp-bridge";

        /// <summary>unity-mcp-bridge or unity-mcp-bridge.exe.</summary>
        public static string ExecutableName(bool windows) => windows ? ProgramName + ".exe" : ProgramName;

        /// <summary>&lt;project&gt;/Library/UnityMcpBridge/bin/&lt;version&gt;.</summary>
        public static string DownloadFolder(string project, string version) =>
            Path.Combine(Path.Combine(Path.Combine(Path.Combine(project, "Library"), "UnityMcpBridge"), "bin"), version);

        /// <summary>Where the window puts the bridge it downloads.</summary>
        public static string DownloadedPath(string project, string version, bool windows) =>
            Path.Combine(DownloadFolder(project, version), ExecutableName(windows));

        /// <summary>
        /// Every bridge found, best first (downloaded, on PATH, npx), each
        /// with its version read. Nothing found: an empty list. Blocks while
        /// the versions are read: call it off the main thread.
        /// </summary>
        public static List<BridgeInstall> FindAll(BridgeEnvironment env)
        {
            var found = new List<BridgeInstall>();
            var downloaded = DownloadedPath(env.Project, env.PackageVersion, env.IsWindows);
            if (IsRunnable(downloaded, env.IsWindows))
            {
                found.Add(new BridgeInstall { Kind = BridgeKind.Downloaded, FileName = downloaded, DisplayPath = downloaded });
            }
            // An npm global install puts a unity-mcp-bridge.cmd shim on PATH on Windows.
            var onPath = FindOnPath(env, env.IsWindows ? new[] { ExecutableName(true), ProgramName + ".cmd" } : new[] { ProgramName });
            if (onPath != null && !found.Any(f => SamePath(f.FileName, onPath, env.IsWindows)))
            {
                found.Add(new BridgeInstall
                {
                    Kind = BridgeKind.OnPath,
                    FileName = onPath,
                    DisplayPath = onPath,
                    ThroughCmd = env.IsWindows && onPath.EndsWith(".cmd", StringComparison.OrdinalIgnoreCase),
                });
            }
            foreach (var install in found)
            {
                ReadVersion(install, env.Runner, env.VersionTimeout);
            }
            var npx = FindOnPath(env, env.IsWindows ? new[] { "npx.cmd" } : new[] { "npx" });
            if (npx != null)
            {
                var pinned = ProgramName + "@" + env.PackageVersion;
                found.Add(new BridgeInstall
                {
                    Kind = BridgeKind.Npx,
                    FileName = npx,
                    LeadingArgs = new[] { "-y", pinned },
                    ThroughCmd = env.IsWindows,
                    DisplayPath = "npx -y " + pinned + " (" + npx + ")",
                    Version = env.PackageVersion,
                    NotYetFetched = true,
                });
            }
            return found;
        }

        /// <summary>The bridge to use: the first whose version is known, else the first found; null when none.</summary>
        public static BridgeInstall Choose(IList<BridgeInstall> installs) =>
            installs.FirstOrDefault(i => i.Version != null) ?? installs.FirstOrDefault();

        /// <summary>
        /// The first of <paramref name="names"/> in the PATH folders, in
        /// PATH's order (within a folder, in the order given): an existing
        /// file, executable on Unix. Empty entries are skipped.
        /// </summary>
        public static string FindOnPath(BridgeEnvironment env, string[] names)
        {
            var separator = env.IsWindows ? ';' : ':';
            foreach (var raw in (env.PathVariable ?? "").Split(separator))
            {
                var dir = env.IsWindows ? raw.Trim().Trim('"') : raw;
                if (dir.Length == 0)
                {
                    continue;
                }
                foreach (var name in names)
                {
                    string candidate;
                    try
                    {
                        candidate = Path.Combine(dir, name);
                    }
                    catch (ArgumentException)
                    {
                        break; // A PATH entry with characters a path cannot have.
                    }
                    if (IsRunnable(candidate, env.IsWindows))
                    {
                        return candidate;
                    }
                }
            }
            return null;
        }

        /// <summary>A file (not a folder) that exists and, on Unix, that its user may execute.</summary>
        public static bool IsRunnable(string path, bool windows)
        {
            if (!File.Exists(path))
            {
                return false;
            }
            return windows || IsExecutable(path);
        }

        const int ExecuteOk = 1; // X_OK

        [DllImport("libc", SetLastError = true)]
        static extern int access(string path, int mode);

        static bool IsExecutable(string path)
        {
            try
            {
                return access(path, ExecuteOk) == 0;
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
            {
                return true; // Cannot tell here: `--version` will.
            }
        }

        static bool SamePath(string a, string b, bool windows) =>
            string.Equals(Path.GetFullPath(a), Path.GetFullPath(b), windows ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal);

        /// <summary>Runs `--version` and sets <see cref="BridgeInstall.Version"/> (or why it is unknown).</summary>
        public static void ReadVersion(BridgeInstall install, IProcessRunner runner, TimeSpan timeout)
        {
            install.Version = null;
            install.VersionProblem = null;
            var command = install.Command("--version");
            var result = runner.Run(command.FileName, command.Arguments, timeout);
            if (result.StartError != null)
            {
                install.VersionProblem = "could not run it: " + result.StartError;
            }
            else if (result.TimedOut)
            {
                install.VersionProblem = "--version did not answer within " + timeout.TotalSeconds.ToString("0.#", System.Globalization.CultureInfo.InvariantCulture) + " s";
            }
            else if (result.ExitCode != 0)
            {
                install.VersionProblem = "--version failed with exit code " + result.ExitCode;
            }
            else
            {
                install.Version = ParseVersion(result.Output);
                if (install.Version == null)
                {
                    install.VersionProblem = "--version printed " + Shorten(result.Output.Trim());
                }
            }
        }

        /// <summary>"unity-mcp-bridge 0.1.0\n" → "0.1.0"; anything else → null.</summary>
        public static string ParseVersion(string output)
        {
            var line = (output ?? "").Trim();
            var prefix = ProgramName + " ";
            if (!line.StartsWith(prefix, StringComparison.Ordinal) || line.IndexOf('\n') >= 0)
            {
                return null;
            }
            var version = line.Substring(prefix.Length).Trim();
            return version.Length > 0 && version.IndexOf(' ') < 0 ? version : null;
        }

        static string Shorten(string text) => text.Length == 0 ? "nothing" : "\"" + (text.Length > 80 ? text.Substring(0, 80) + "…" : text) + "\"";

        /// <summary>
        /// `… --project "&lt;project&gt;" setup &lt;client&gt; --via binary|npx`: the
        /// bridge writes itself into the client's configuration, by its
        /// absolute path (binary) or as an npx command pinned to its version.
        /// </summary>
        public static ProcessCommand SetupCommand(BridgeInstall install, string client, string projectPath) =>
            install.Command("--project", projectPath, "setup", client, "--via", install.Kind == BridgeKind.Npx ? "npx" : "binary");
    }

    /// <summary>Quoting for ProcessStartInfo.Arguments.</summary>
    public static class CommandLine
    {
        /// <summary>Whether this runtime splits Arguments by Windows' rules (on Windows) or a shell's (mono on Unix).</summary>
        public static readonly bool WindowsRules = RuntimeInformation.IsOSPlatform(OSPlatform.Windows);

        public static string Join(IEnumerable<string> args, bool windows) => string.Join(" ", args.Select(a => Quote(a, windows)));

        /// <summary>
        /// One argument, quoted so that it arrives whole. Windows: the rules
        /// of CommandLineToArgvW and the C runtime (backslashes double only
        /// before a quote). Unix: mono splits Arguments like a shell without
        /// expansion (g_shell_parse_argv): inside double quotes a backslash
        /// escapes ", \, $ and `.
        /// </summary>
        public static string Quote(string arg, bool windows) => Quote(arg, windows, false);

        /// <summary>
        /// An argument of a line cmd.exe runs: by Windows' rules, and quoted
        /// whenever it holds one of cmd's operators (&amp; | &lt; &gt; ^ ( )),
        /// which are plain characters between quotes.
        /// </summary>
        public static string QuoteForCmd(string arg) => Quote(arg, true, arg.IndexOfAny(CmdSpecial) >= 0);

        static string Quote(string arg, bool windows, bool always)
        {
            if (!always && arg.Length > 0 && arg.IndexOfAny(windows ? WindowsSpecial : UnixSpecial) < 0)
            {
                return arg;
            }
            var quoted = new StringBuilder("\"");
            if (!windows)
            {
                foreach (var c in arg)
                {
                    if (c == '"' || c == '\\' || c == '$' || c == '`')
                    {
                        quoted.Append('\\');
                    }
                    quoted.Append(c);
                }
                return quoted.Append('"').ToString();
            }
            var backslashes = 0;
            foreach (var c in arg)
            {
                if (c == '\\')
                {
                    backslashes++;
                    continue;
                }
                // Backslashes before a quote are doubled, and the quote escaped.
                quoted.Append('\\', c == '"' ? backslashes * 2 + 1 : backslashes);
                backslashes = 0;
                quoted.Append(c);
            }
            // Backslashes before the closing quote are doubled.
            return quoted.Append('\\', backslashes * 2).Append('"').ToString();
        }

        static readonly char[] CmdSpecial = { '&', '|', '<', '>', '^', '(', ')' };
        static readonly char[] WindowsSpecial = { ' ', '\t', '\n', '\v', '"' };
        static readonly char[] UnixSpecial = { ' ', '\t', '\n', '\v', '"', '\'', '\\', '$', '`', '|', '&', ';', '<', '>', '(', ')', '*', '?', '[', '#', '~', '=', '%' };
    }
}

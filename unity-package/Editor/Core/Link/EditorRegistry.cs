// The per-user registry of open Editors: one file per Editor process,
// <folder>/<pid>.json, so a bridge started outside any project finds every
// Editor of this user (and then each project's own discovery file, which
// stays the source of truth). The folder is UNITY_MCP_EDITORS_DIR when set,
// else a per-user folder of the platform (Folder()); on Unix it is rwx------
// (0700) and each entry rw------- (0600), written atomically as the
// discovery file is. An entry says where an Editor is and what state it is
// in, never its token nor its server session: a reader takes those from the
// project's discovery file. It is written whenever the discovery file is
// (DiscoveryFile.Publish) and deleted when the Editor says "stopped" (it
// quits); an Editor that crashes leaves its entry, which names a process
// that is gone.

using System;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>This Editor's entry in the per-user registry of open Editors.</summary>
    public static class EditorRegistry
    {
        /// <summary>The environment variable that, set and not empty, is the registry's folder.</summary>
        public const string FolderVariable = "UNITY_MCP_EDITORS_DIR";

        /// <summary>The state an Editor that quits publishes: its entry is deleted.</summary>
        public const string Stopped = "stopped";

        /// <summary>The registry's folder on this machine, for this user.</summary>
        public static string Folder()
        {
            var os = RuntimeInformation.IsOSPlatform(OSPlatform.Windows) ? "windows"
                : RuntimeInformation.IsOSPlatform(OSPlatform.OSX) ? "macos"
                : "linux";
            return Folder(os, Environment.GetEnvironmentVariable, () => Environment.GetFolderPath(Environment.SpecialFolder.LocalApplicationData));
        }

        /// <summary>
        /// The registry's folder on <paramref name="os"/> (windows, macos,
        /// linux: any other is taken as linux) with these environment
        /// variables: UNITY_MCP_EDITORS_DIR when set and not empty; else on
        /// Windows %LOCALAPPDATA%\UnityMcp\Editors
        /// (<paramref name="localAppData"/>), on macOS
        /// $HOME/Library/Application Support/UnityMcp/Editors, elsewhere
        /// $XDG_STATE_HOME/unity-mcp/editors when XDG_STATE_HOME is set and
        /// absolute, else $HOME/.local/state/unity-mcp/editors.
        /// </summary>
        public static string Folder(string os, Func<string, string> variable, Func<string> localAppData)
        {
            var configured = variable(FolderVariable);
            if (!string.IsNullOrEmpty(configured))
            {
                return configured;
            }
            if (os == "windows")
            {
                return Path.Combine(localAppData(), "UnityMcp", "Editors");
            }
            var home = variable("HOME");
            if (string.IsNullOrEmpty(home))
            {
                home = Environment.GetFolderPath(Environment.SpecialFolder.UserProfile);
            }
            if (os == "macos")
            {
                return Path.Combine(home, "Library", "Application Support", "UnityMcp", "Editors");
            }
            var state = variable("XDG_STATE_HOME");
            if (!string.IsNullOrEmpty(state) && state.StartsWith("/", StringComparison.Ordinal))
            {
                return Path.Combine(state, "unity-mcp", "editors");
            }
            return Path.Combine(home, ".local", "state", "unity-mcp", "editors");
        }

        /// <summary>The entry of the Editor process <paramref name="pid"/>: &lt;folder&gt;/&lt;pid&gt;.json.</summary>
        public static string PathOf(int pid) => Path.Combine(Folder(), pid.ToString(CultureInfo.InvariantCulture) + ".json");

        /// <summary>The entry's JSON for <paramref name="info"/>, stamped with <paramref name="now"/>: no token, no server session.</summary>
        public static JObject ToJson(DiscoveryInfo info, DateTime now)
        {
            return new JObject
            {
                ["pid"] = info.Pid,
                ["projectPath"] = info.ProjectPath,
                ["port"] = info.Port,
                ["unityVersion"] = info.UnityVersion,
                ["packageVersion"] = info.PackageVersion,
                ["protocolVersion"] = DiscoveryFile.ProtocolVersion,
                ["state"] = info.State,
                ["updatedAt"] = DiscoveryFile.IsoTimestamp(now),
            };
        }

        /// <summary>
        /// Writes the entry of <paramref name="info"/>'s process atomically,
        /// readable by its user only (Unix), its folder made if missing and
        /// set to 0700 (Unix); throws when it cannot.
        /// </summary>
        public static void Write(DiscoveryInfo info, DateTime now)
        {
            if (info.Pid <= 0)
            {
                throw new ArgumentException("no process id to name the entry by");
            }
            var folder = Folder();
            Directory.CreateDirectory(folder);
            if (DiscoveryFile.IsUnix)
            {
                DiscoveryFile.SetMode(folder, DiscoveryFile.OwnerOnlyFolder);
            }
            var bytes = Encoding.UTF8.GetBytes(ToJson(info, now).ToString(Newtonsoft.Json.Formatting.Indented) + "\n");
            DiscoveryFile.WriteAtomically(Path.Combine(folder, info.Pid.ToString(CultureInfo.InvariantCulture) + ".json"), bytes, true);
        }

        /// <summary>Deletes the entry of the process <paramref name="pid"/>; one that is not there is fine.</summary>
        public static void Remove(int pid)
        {
            if (pid <= 0)
            {
                return;
            }
            var path = PathOf(pid);
            if (File.Exists(path))
            {
                File.Delete(path);
            }
        }

        /// <summary>
        /// Writes the entry for <paramref name="info"/>, or deletes it when
        /// its state is "stopped". Never throws: a failure is told to
        /// <paramref name="warn"/> (the discovery file stays the source of
        /// truth, and serving goes on).
        /// </summary>
        public static void Publish(DiscoveryInfo info, DateTime now, Action<string> warn)
        {
            try
            {
                if (info.State == Stopped)
                {
                    Remove(info.Pid);
                }
                else
                {
                    Write(info, now);
                }
            }
            catch (Exception e)
            {
                Warn(warn, "Unity MCP: cannot " + (info.State == Stopped ? "delete" : "write") + " this Editor's entry in the registry of open Editors (" + SafeFolder() + "): " + e.Message);
            }
        }

        /// <summary>The folder, for a message: its lookup may be what failed.</summary>
        static string SafeFolder()
        {
            try
            {
                return Folder();
            }
            catch (Exception e)
            {
                return "folder unknown: " + e.Message;
            }
        }

        static void Warn(Action<string> warn, string message)
        {
            if (warn == null)
            {
                return;
            }
            try
            {
                warn(message);
            }
            catch (Exception)
            {
                // A logger that fails is not a reason to stop serving.
            }
        }
    }
}

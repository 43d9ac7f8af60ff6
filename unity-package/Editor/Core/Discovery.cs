// The discovery file (§7): <project>/Library/MCPInstance.json, written
// atomically (a temporary file in the same folder, then a rename) so a
// reader never finds it empty or cut.

using System;
using System.Globalization;
using System.IO;
using System.Text;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>What the discovery file says.</summary>
    public sealed class DiscoveryInfo
    {
        public int Port;
        public int Pid;
        public string ProjectPath = "";
        public string UnityVersion = "";
        public string PackageVersion = "";
        public string ServerSessionId = "";
        /// <summary>starting, ready, reloading or stopped.</summary>
        public string State = "starting";
    }

    /// <summary>Writes the discovery file.</summary>
    public static class DiscoveryFile
    {
        /// <summary>The protocol version this package speaks (docs/editor-link-protocol.md).</summary>
        public const int ProtocolVersion = 1;

        public static string PathIn(string project) => System.IO.Path.Combine(System.IO.Path.Combine(project, "Library"), "MCPInstance.json");

        /// <summary>The file's JSON for <paramref name="info"/>, stamped with <paramref name="now"/>.</summary>
        public static JObject ToJson(DiscoveryInfo info, DateTime now)
        {
            return new JObject
            {
                ["port"] = info.Port,
                ["pid"] = info.Pid,
                ["projectPath"] = info.ProjectPath,
                ["unityVersion"] = info.UnityVersion,
                ["packageVersion"] = info.PackageVersion,
                ["protocolVersion"] = ProtocolVersion,
                ["serverSessionId"] = info.ServerSessionId,
                ["state"] = info.State,
                ["updatedAt"] = IsoTimestamp(now),
            };
        }

        /// <summary>2026-01-31T12:34:56.789Z</summary>
        public static string IsoTimestamp(DateTime time) => time.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);

        /// <summary>Writes the file for <paramref name="info"/> atomically.</summary>
        public static void Write(string project, DiscoveryInfo info)
        {
            WriteAtomically(PathIn(project), Encoding.UTF8.GetBytes(ToJson(info, DateTime.UtcNow).ToString(Newtonsoft.Json.Formatting.Indented) + "\n"));
        }

        /// <summary>Writes <paramref name="bytes"/> to a temporary sibling, then renames it over <paramref name="path"/>.</summary>
        public static void WriteAtomically(string path, byte[] bytes)
        {
            var dir = System.IO.Path.GetDirectoryName(path);
            Directory.CreateDirectory(dir);
            var tmp = System.IO.Path.Combine(dir, "." + System.IO.Path.GetFileName(path) + "." + Guid.NewGuid().ToString("N") + ".tmp");
            try
            {
                using (var file = new FileStream(tmp, FileMode.CreateNew, FileAccess.Write))
                {
                    file.Write(bytes, 0, bytes.Length);
                    file.Flush(true);
                }
                if (File.Exists(path))
                {
                    // Atomic on every platform Unity runs on (rename(2), MoveFileEx).
                    File.Replace(tmp, path, null);
                }
                else
                {
                    File.Move(tmp, path);
                }
            }
            finally
            {
                if (File.Exists(tmp))
                {
                    File.Delete(tmp);
                }
            }
        }
    }
}

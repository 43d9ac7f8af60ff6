// The discovery file (§7): <project>/Library/MCPInstance.json, written
// atomically (a temporary file, then a rename) so a reader never finds it
// empty or cut. It holds the Editor's token (extension token), so on Unix it
// is readable and writable by its user only (0600); on Windows it inherits
// the ACL of the project's Library folder, so whoever may read the project
// may read the token. Beside it, EditorRegistry keeps this Editor's entry in
// the per-user registry of open Editors (no token there).

using System;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;
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
        /// <summary>The token every request must carry as x-token (extension token); null or empty: not written.</summary>
        public string Token;
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
            var json = new JObject
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
            if (!string.IsNullOrEmpty(info.Token))
            {
                json["token"] = info.Token;
            }
            return json;
        }

        /// <summary>2026-01-31T12:34:56.789Z</summary>
        public static string IsoTimestamp(DateTime time) => time.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);

        /// <summary>Writes the file for <paramref name="info"/> atomically, readable by its user only (Unix).</summary>
        public static void Write(string project, DiscoveryInfo info) => Write(project, info, DateTime.UtcNow);

        static void Write(string project, DiscoveryInfo info, DateTime now)
        {
            WriteAtomically(PathIn(project), Encoding.UTF8.GetBytes(ToJson(info, now).ToString(Newtonsoft.Json.Formatting.Indented) + "\n"), true);
        }

        /// <summary>
        /// Says where the server is: writes the discovery file (which stays
        /// the source of truth; a failure to write it throws, as Write does)
        /// and this Editor's entry in the per-user registry of open Editors
        /// (EditorRegistry), both stamped with the same time. A state other
        /// than "stopped" writes the entry, only once the discovery file is
        /// written; "stopped" deletes it, whether or not the discovery file
        /// could be written. A failure of the registry never throws: it is
        /// told to <paramref name="warn"/>.
        /// </summary>
        public static void Publish(string project, DiscoveryInfo info, Action<string> warn)
        {
            var now = DateTime.UtcNow;
            var written = false;
            try
            {
                Write(project, info, now);
                written = true;
            }
            finally
            {
                if (written || info.State == EditorRegistry.Stopped)
                {
                    EditorRegistry.Publish(info, now, warn);
                }
            }
        }

        /// <summary>Whether files have Unix modes here (Linux, macOS), not Windows ACLs.</summary>
        public static bool IsUnix =>
            Environment.OSVersion.Platform == PlatformID.Unix || Environment.OSVersion.Platform == PlatformID.MacOSX || System.IO.Path.DirectorySeparatorChar == '/';

        /// <summary>rw------- (0600).</summary>
        internal const uint OwnerReadWrite = 0x180;

        /// <summary>rwx------ (0700).</summary>
        internal const uint OwnerOnlyFolder = 0x1C0;

        [DllImport("libc", SetLastError = true)]
        static extern int chmod(string path, uint mode);

        /// <summary>Sets a Unix mode; throws rather than leave a secret readable by others.</summary>
        internal static void SetMode(string path, uint mode)
        {
            int result;
            try
            {
                result = chmod(path, mode);
            }
            catch (Exception e) when (e is DllNotFoundException || e is EntryPointNotFoundException)
            {
                throw new IOException("cannot make " + path + " private to its user: chmod is unavailable (" + e.Message + ")", e);
            }
            if (result != 0)
            {
                var errno = Marshal.GetLastWin32Error();
                throw new IOException("cannot make " + path + " private to its user: chmod failed with errno " + errno);
            }
        }

        /// <summary>How long a rename refused on Windows is tried again.</summary>
        const int RenamePatienceMs = 500;

        /// <summary>
        /// Renames <paramref name="tmp"/> over <paramref name="path"/>: atomic
        /// on every platform Unity runs on (rename(2), MoveFileEx). On Windows
        /// the rename fails (access denied, sharing violation) while another
        /// process has the file open: a bridge reading it, an indexer, an
        /// antivirus scan. They hold it for moments, so it is tried again,
        /// often (a reader that polls keeps it open much of the time: the
        /// gaps are short), for up to half a second; a file left unpublished
        /// would keep the bridge waiting for an Editor already listening.
        /// </summary>
        static void RenameOver(string tmp, string path)
        {
            var watch = System.Diagnostics.Stopwatch.StartNew();
            var pause = 1;
            while (true)
            {
                try
                {
                    if (File.Exists(path))
                    {
                        File.Replace(tmp, path, null);
                    }
                    else
                    {
                        File.Move(tmp, path);
                    }
                    return;
                }
                catch (Exception e) when ((e is IOException || e is UnauthorizedAccessException) && !IsUnix && watch.ElapsedMilliseconds < RenamePatienceMs)
                {
                    System.Threading.Thread.Sleep(pause);
                    pause = Math.Min(pause * 2, 4);
                }
            }
        }

        /// <summary>
        /// Writes <paramref name="bytes"/> to a temporary file, then renames it
        /// over <paramref name="path"/>. With <paramref name="ownerOnly"/>, on
        /// Unix the file ends readable and writable by its user only (0600):
        /// the temporary file is made in a folder of its own that is 0700
        /// before the file exists (so no one else can open it in the moment
        /// before its own mode is set) and is 0600 before a byte is written;
        /// the final file is set 0600 again after the rename, whatever the
        /// runtime's File.Replace keeps. A chmod that fails throws an
        /// IOException naming the path and errno, and nothing is published.
        /// On Windows the file inherits the folder's ACL (the project's).
        /// </summary>
        public static void WriteAtomically(string path, byte[] bytes, bool ownerOnly = false)
        {
            var dir = System.IO.Path.GetDirectoryName(path);
            Directory.CreateDirectory(dir);
            var name = "." + System.IO.Path.GetFileName(path) + "." + Guid.NewGuid().ToString("N");
            string privateDir = null;
            var unixPrivate = ownerOnly && IsUnix;
            if (unixPrivate)
            {
                privateDir = System.IO.Path.Combine(dir, name + ".d");
                if (Directory.Exists(privateDir))
                {
                    throw new IOException(privateDir + " exists already");
                }
                Directory.CreateDirectory(privateDir);
            }
            var tmp = System.IO.Path.Combine(privateDir ?? dir, name + ".tmp");
            try
            {
                if (unixPrivate)
                {
                    SetMode(privateDir, OwnerOnlyFolder);
                }
                using (var file = new FileStream(tmp, FileMode.CreateNew, FileAccess.Write))
                {
                    if (unixPrivate)
                    {
                        SetMode(tmp, OwnerReadWrite);
                    }
                    file.Write(bytes, 0, bytes.Length);
                    file.Flush(true);
                }
                RenameOver(tmp, path);
                if (unixPrivate)
                {
                    SetMode(path, OwnerReadWrite);
                }
            }
            finally
            {
                if (File.Exists(tmp))
                {
                    File.Delete(tmp);
                }
                if (privateDir != null)
                {
                    try
                    {
                        Directory.Delete(privateDir);
                    }
                    catch (Exception e) when (e is IOException || e is UnauthorizedAccessException)
                    {
                        // Not empty (someone put a file there): left, harmless.
                    }
                }
            }
        }
    }
}

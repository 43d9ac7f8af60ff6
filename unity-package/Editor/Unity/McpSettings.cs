// The package's settings (port, security of §6, disabled tools, clients
// without a token, pressing dialog buttons), kept per project in UserSettings/UnityMcpSettings.json
// (uLoopMCP's file, which clients read for the port), and the resume
// journal's store in SessionState, which survives domain reloads but not the
// Editor.

using System;
using System.IO;
using System.Linq;
using System.Text;
using Newtonsoft.Json.Linq;
using UnityEditor;
using UnityMcp.Core;

namespace UnityMcp.Editor
{
    public sealed class McpSettings
    {
        public int Port = EditorServer.DefaultPort;
        public SecuritySettings Security = new SecuritySettings();

        static string PathIn(string project) => Path.Combine(Path.Combine(project, "UserSettings"), "UnityMcpSettings.json");

        /// <summary>The project's settings, or the defaults (a broken file is reported, not fatal).</summary>
        public static McpSettings Load(string project)
        {
            var settings = new McpSettings();
            var path = PathIn(project);
            if (!File.Exists(path))
            {
                return settings;
            }
            try
            {
                var json = JObject.Parse(File.ReadAllText(path));
                settings.Port = (int?)json["customPort"] ?? settings.Port;
                var s = settings.Security;
                s.EnableTestsExecution = (bool?)json["enableTestsExecution"] ?? s.EnableTestsExecution;
                s.AllowMenuItemExecution = (bool?)json["allowMenuItemExecution"] ?? s.AllowMenuItemExecution;
                s.AllowPressingDialogButtons = (bool?)json["allowPressingDialogButtons"] ?? s.AllowPressingDialogButtons;
                s.AllowThirdPartyTools = (bool?)json["allowThirdPartyTools"] ?? s.AllowThirdPartyTools;
                s.AllowClientsWithoutToken = (bool?)json["allowClientsWithoutToken"] ?? s.AllowClientsWithoutToken;
                var level = (string)json["dynamicCodeSecurityLevel"];
                if (level != null && Enum.IsDefined(typeof(DynamicCodeSecurityLevel), level))
                {
                    s.DynamicCodeSecurityLevel = (DynamicCodeSecurityLevel)Enum.Parse(typeof(DynamicCodeSecurityLevel), level);
                }
                var disabled = json["disabledTools"] as JArray;
                if (disabled != null)
                {
                    s.DisabledTools = disabled.Select(t => (string)t).ToList();
                }
            }
            catch (Exception e)
            {
                UnityEngine.Debug.LogWarning("Unity MCP: " + path + " could not be read (" + e.Message + "); using the default settings");
            }
            return settings;
        }

        /// <summary>Writes the settings, keeping what other tools put in the file (serverSessionId …).</summary>
        public void Save(string project, string serverSessionId)
        {
            var path = PathIn(project);
            JObject json;
            try
            {
                json = File.Exists(path) ? JObject.Parse(File.ReadAllText(path)) : new JObject();
            }
            catch (Exception)
            {
                json = new JObject();
            }
            json["customPort"] = Port;
            json["projectRootPath"] = project.Replace('\\', '/');
            json["serverSessionId"] = serverSessionId;
            json["enableTestsExecution"] = Security.EnableTestsExecution;
            json["allowMenuItemExecution"] = Security.AllowMenuItemExecution;
            json["allowPressingDialogButtons"] = Security.AllowPressingDialogButtons;
            json["allowThirdPartyTools"] = Security.AllowThirdPartyTools;
            json["allowClientsWithoutToken"] = Security.AllowClientsWithoutToken;
            json["dynamicCodeSecurityLevel"] = Security.DynamicCodeSecurityLevel.ToString();
            json["disabledTools"] = new JArray(Security.DisabledTools.Cast<object>().ToArray());
            Directory.CreateDirectory(Path.GetDirectoryName(path));
            DiscoveryFile.WriteAtomically(path, Encoding.UTF8.GetBytes(json.ToString(Newtonsoft.Json.Formatting.Indented)));
        }
    }

    /// <summary>The resume journal kept in SessionState: it outlives domain reloads, not the Editor.</summary>
    public static class SessionStateJournal
    {
        const string Key = "UnityMcp.Journal";

        /// <summary>The store, reading what SessionState holds (call on the main thread); flush it every update and before a reload.</summary>
        public static HeldJournalStore Open()
        {
            return new HeldJournalStore(SessionState.GetString(Key, ""), journal => SessionState.SetString(Key, journal));
        }
    }
}

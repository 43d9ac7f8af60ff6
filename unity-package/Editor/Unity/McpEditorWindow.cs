// Window > Unity MCP, in the seeds' model/view/presenter split: the model is
// a snapshot of the server (status, port, clients, settings), the view draws
// it with IMGUI and reports what the user did, the presenter acts: applies
// settings and configures MCP clients through `unity-mcp-bridge setup`.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using UnityEditor;
using UnityEngine;
using UnityMcp.Core;

namespace UnityMcp.Editor
{
    /// <summary>What the window shows.</summary>
    public sealed class McpWindowModel
    {
        public bool Running;
        public int Port;
        public string Error;
        public List<string> Clients = new List<string>();
        public McpSettings Settings;
        public string SetupOutput = "";

        public static McpWindowModel Now(string setupOutput)
        {
            return new McpWindowModel
            {
                Running = McpServerController.IsRunning,
                Port = McpServerController.Port,
                Error = McpServerController.LastError,
                Clients = McpServerController.Clients.Select(c => (c.ClientName.Length > 0 ? c.ClientName : "(unnamed)") + " — " + c.Endpoint).ToList(),
                Settings = McpServerController.Settings,
                SetupOutput = setupOutput,
            };
        }
    }

    /// <summary>Acts on what the user did in the window.</summary>
    public sealed class McpWindowPresenter
    {
        /// <summary>The MCP clients `unity-mcp-bridge setup` can configure.</summary>
        public static readonly string[] SetupClients = { "claude-code", "cursor", "vscode", "windsurf", "codex", "gemini" };

        public string SetupOutput = "";

        public McpWindowModel Model() => McpWindowModel.Now(SetupOutput);

        public void Apply(McpSettings settings) => McpServerController.ApplySettings(settings);

        public void Restart()
        {
            McpServerController.Stop("EditorQuit");
            McpServerController.Start(false);
        }

        /// <summary>
        /// Runs `unity-mcp-bridge --project P setup CLIENT` (the bridge on
        /// PATH) on a worker thread: OnGUI never waits for a process. What it
        /// printed shows once it has ended (or been stopped after 30 s).
        /// </summary>
        public void Configure(string client)
        {
            if (running != null && !running.IsCompleted)
            {
                return;
            }
            SetupOutput = "running unity-mcp-bridge setup " + client + "…";
            var project = McpServerController.Project;
            running = Task.Run(() => SetupOutput = RunSetup(project, client));
        }

        Task running;

        static string RunSetup(string project, string client)
        {
            var start = new ProcessStartInfo("unity-mcp-bridge", "--project \"" + project + "\" setup " + client)
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                CreateNoWindow = true,
            };
            try
            {
                using (var process = Process.Start(start))
                {
                    // Both pipes read at once: one left full would stall the other.
                    var output = process.StandardOutput.ReadToEndAsync();
                    var errors = process.StandardError.ReadToEndAsync();
                    if (!process.WaitForExit(30000))
                    {
                        process.Kill();
                        return "unity-mcp-bridge setup " + client + " did not finish within 30 s and was stopped";
                    }
                    var printed = (output.Result + errors.Result).Trim();
                    return (process.ExitCode == 0 ? "" : "failed (exit " + process.ExitCode + "): ") + printed;
                }
            }
            catch (Exception e)
            {
                return "unity-mcp-bridge could not be run (" + e.Message + "): install it (see the package README) and make sure it is on PATH";
            }
        }
    }

    /// <summary>The view.</summary>
    public sealed class McpEditorWindow : EditorWindow
    {
        readonly McpWindowPresenter presenter = new McpWindowPresenter();
        Vector2 scroll;

        [MenuItem("Window/Unity MCP")]
        public static void Open()
        {
            GetWindow<McpEditorWindow>("Unity MCP");
        }

        void OnInspectorUpdate()
        {
            Repaint();
        }

        void OnGUI()
        {
            var model = presenter.Model();
            scroll = EditorGUILayout.BeginScrollView(scroll);
            EditorGUILayout.LabelField("Server", model.Running ? "listening on 127.0.0.1:" + model.Port : "stopped" + (model.Error != null ? ": " + model.Error : ""));
            if (GUILayout.Button("Restart server"))
            {
                presenter.Restart();
            }
            EditorGUILayout.Space();
            EditorGUILayout.LabelField("Connected clients (" + model.Clients.Count + ")", EditorStyles.boldLabel);
            foreach (var client in model.Clients)
            {
                EditorGUILayout.LabelField(client);
            }
            EditorGUILayout.Space();
            EditorGUILayout.LabelField("Security", EditorStyles.boldLabel);
            var s = model.Settings.Security;
            var edited = new McpSettings
            {
                // Delayed: the value is taken when editing ends, not at each
                // keystroke (each new port restarts the server).
                Port = EditorGUILayout.DelayedIntField("Preferred port", model.Settings.Port),
                Security = new SecuritySettings
                {
                    EnableTestsExecution = EditorGUILayout.Toggle("Enable Tests Execution", s.EnableTestsExecution),
                    AllowMenuItemExecution = EditorGUILayout.Toggle("Allow Menu Item Execution", s.AllowMenuItemExecution),
                    AllowThirdPartyTools = EditorGUILayout.Toggle("Allow Third Party Tools", s.AllowThirdPartyTools),
                    DynamicCodeSecurityLevel = (DynamicCodeSecurityLevel)EditorGUILayout.EnumPopup("Dynamic code", s.DynamicCodeSecurityLevel),
                    DisabledTools = s.DisabledTools,
                    AllowClientsWithoutToken = EditorGUILayout.Toggle("Allow clients without a token", s.AllowClientsWithoutToken),
                },
            };
            if (edited.Security.AllowClientsWithoutToken)
            {
                EditorGUILayout.HelpBox("Any program run by any user on this machine can then call this Editor's tools, dynamic code included. Turn this on only for a legacy client that cannot send the token from Library/MCPInstance.json.", MessageType.Warning);
            }
            if (GUI.changed)
            {
                presenter.Apply(edited);
            }
            EditorGUILayout.Space();
            EditorGUILayout.LabelField("Configure an MCP client (runs unity-mcp-bridge setup)", EditorStyles.boldLabel);
            foreach (var client in McpWindowPresenter.SetupClients)
            {
                if (GUILayout.Button(client))
                {
                    presenter.Configure(client);
                }
            }
            if (model.SetupOutput.Length > 0)
            {
                EditorGUILayout.HelpBox(model.SetupOutput, MessageType.Info);
            }
            EditorGUILayout.EndScrollView();
        }
    }
}

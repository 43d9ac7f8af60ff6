// Window > Unity MCP, in the seeds' model/view/presenter split: the model is
// a snapshot of the server (status, port, clients, settings) and of the
// bridges found, the view draws it with IMGUI and reports what the user did,
// the presenter acts: applies settings, looks for unity-mcp-bridge
// (BridgeLocator), downloads the release binary (BridgeDownloadJob) and
// configures MCP clients through the chosen bridge's `setup`. Scans,
// downloads and setups run on workers; OnGUI only reads their state, so the
// main thread never waits on them (Unity's main-thread context would
// deadlock a wait on async work).

using System;
using System.Collections.Generic;
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
        /// <summary>Every bridge found, best first; the chosen one (null: none).</summary>
        public List<BridgeInstall> Bridges = new List<BridgeInstall>();
        public BridgeInstall Bridge;
        /// <summary>A scan is under way (the list is the previous one's).</summary>
        public bool Scanning;
        public string ScanError;
        /// <summary>The release target of this machine, or null when there is none.</summary>
        public string Target;
        public string NoTargetReason;
        public BridgeDownloadState Download;
        public string DownloadStatus = "";

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

        /// <summary>Written by the setup worker, read by OnGUI.</summary>
        public volatile string SetupOutput = "";

        /// <summary>What a scan found: replaced whole, never changed, so OnGUI reads it safely.</summary>
        sealed class Scan
        {
            public List<BridgeInstall> Installs = new List<BridgeInstall>();
            public BridgeInstall Chosen;
            public string Error;
        }

        volatile Scan found = new Scan();
        Task scanning;
        readonly BridgeDownloadJob download = new BridgeDownloadJob();
        Task<string> rescannedAfter;
        readonly BridgePlatform platform = BridgePlatform.Current();
        readonly string target;
        readonly string noTarget;

        public McpWindowPresenter()
        {
            target = BridgeRelease.TargetFor(platform);
            if (target == null)
            {
                try
                {
                    BridgeRelease.Target(platform);
                }
                catch (BridgeDownloadException e)
                {
                    noTarget = e.Message;
                }
            }
        }

        public McpWindowModel Model()
        {
            // A verified download: look again, so it is the one used.
            var finished = download.Running;
            if (download.State == BridgeDownloadState.Installed && finished != rescannedAfter && Rescan())
            {
                rescannedAfter = finished;
            }
            var model = McpWindowModel.Now(SetupOutput);
            var scan = found;
            model.Bridges = scan.Installs;
            model.Bridge = scan.Chosen;
            model.ScanError = scan.Error;
            model.Scanning = scanning != null && !scanning.IsCompleted;
            model.Target = target;
            model.NoTargetReason = noTarget;
            model.Download = download.State;
            model.DownloadStatus = download.Describe();
            return model;
        }

        /// <summary>
        /// Looks for bridges again, on a worker (each is run with --version);
        /// false when a scan is already under way. Call on the main thread.
        /// </summary>
        public bool Rescan()
        {
            if (scanning != null && !scanning.IsCompleted)
            {
                return false;
            }
            var env = BridgeEnvironment.Current(McpServerController.Project, McpServerController.PackageVersion);
            scanning = Task.Run(() =>
            {
                try
                {
                    var installs = BridgeLocator.FindAll(env);
                    found = new Scan { Installs = installs, Chosen = BridgeLocator.Choose(installs) };
                }
                catch (Exception e)
                {
                    found = new Scan { Error = "looking for unity-mcp-bridge failed: " + e.Message };
                }
            });
            return true;
        }

        /// <summary>Downloads this package's bridge version for this machine, on a worker; the window polls its state.</summary>
        public void Download()
        {
            download.Start(new BridgeDownloadOptions
            {
                Project = McpServerController.Project,
                Version = McpServerController.PackageVersion,
                Platform = platform,
            });
        }

        public void CancelDownload() => download.Cancel();

        public void Apply(McpSettings settings) => McpServerController.ApplySettings(settings);

        public void Restart()
        {
            McpServerController.Stop("EditorQuit");
            McpServerController.Start(false);
        }

        /// <summary>
        /// Runs the chosen bridge's `--project P setup CLIENT --via binary|npx`
        /// on a worker thread: OnGUI never waits for a process. What it
        /// printed shows once it has ended (or been stopped: 30 s, or 120 s
        /// for npx, which may first download the package).
        /// </summary>
        public void Configure(string client)
        {
            if (running != null && !running.IsCompleted)
            {
                return;
            }
            var bridge = found.Chosen;
            if (bridge == null)
            {
                SetupOutput = "no unity-mcp-bridge found: download it above, or install it, then Re-scan";
                return;
            }
            var command = BridgeLocator.SetupCommand(bridge, client, McpServerController.Project);
            var timeout = TimeSpan.FromSeconds(bridge.Kind == BridgeKind.Npx ? 120 : 30);
            SetupOutput = "running " + command + "…";
            running = Task.Run(() => SetupOutput = RunSetup(command, client, timeout));
        }

        Task running;

        static string RunSetup(ProcessCommand command, string client, TimeSpan timeout)
        {
            var result = ProcessRunner.Instance.Run(command.FileName, command.Arguments, timeout);
            if (result.StartError != null)
            {
                return command.FileName + " could not be run (" + result.StartError + "): Re-scan, or install unity-mcp-bridge (see the package README)";
            }
            if (result.TimedOut)
            {
                return "setup " + client + " did not finish within " + timeout.TotalSeconds + " s and was stopped";
            }
            var printed = (result.Output + result.Errors).Trim();
            return (result.ExitCode == 0 ? "" : "failed (exit " + result.ExitCode + "): ") + printed;
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

        void OnEnable()
        {
            presenter.Rescan();
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
                    AllowPressingDialogButtons = EditorGUILayout.Toggle("Allow Pressing Dialog Buttons", s.AllowPressingDialogButtons),
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
            // After the settings: GUI.changed above must only see their edits.
            EditorGUILayout.Space();
            BridgeSection(model);
            EditorGUILayout.Space();
            EditorGUILayout.LabelField("Configure an MCP client (runs unity-mcp-bridge setup)", EditorStyles.boldLabel);
            GUI.enabled = model.Bridge != null;
            foreach (var client in McpWindowPresenter.SetupClients)
            {
                if (GUILayout.Button(client))
                {
                    presenter.Configure(client);
                }
            }
            GUI.enabled = true;
            if (model.SetupOutput.Length > 0)
            {
                EditorGUILayout.HelpBox(model.SetupOutput, MessageType.Info);
            }
            EditorGUILayout.EndScrollView();
        }

        void BridgeSection(McpWindowModel model)
        {
            EditorGUILayout.LabelField("Bridge (unity-mcp-bridge)", EditorStyles.boldLabel);
            var bridge = model.Bridge;
            if (bridge != null)
            {
                EditorGUILayout.LabelField("Using", bridge.KindName);
                EditorGUILayout.LabelField("Path", bridge.DisplayPath);
                EditorGUILayout.LabelField("Version", bridge.VersionText);
                if (bridge.Version != null && bridge.Version != McpServerController.PackageVersion)
                {
                    EditorGUILayout.HelpBox("This bridge is version " + bridge.Version + "; this package is " + McpServerController.PackageVersion + ". Download the matching one below.", MessageType.Warning);
                }
                foreach (var other in model.Bridges.Where(b => b != bridge))
                {
                    EditorGUILayout.LabelField("Also found", other.ToString());
                }
            }
            else if (model.Scanning)
            {
                EditorGUILayout.LabelField("Looking for unity-mcp-bridge…");
            }
            else
            {
                EditorGUILayout.HelpBox(
                    "No unity-mcp-bridge found (in this project's Library, on PATH, or npx). Download it below, or install it: "
                    + "npx -y unity-mcp-bridge (Node.js), uvx unity-mcp-bridge (uv), or build it with cargo install --locked --path bridge in a checkout of its repository; then Re-scan.",
                    MessageType.Warning);
            }
            if (model.ScanError != null)
            {
                EditorGUILayout.HelpBox(model.ScanError, MessageType.Error);
            }
            GUI.enabled = !model.Scanning;
            if (GUILayout.Button(model.Scanning ? "Scanning…" : "Re-scan"))
            {
                presenter.Rescan();
            }
            GUI.enabled = true;
            if (model.Target == null)
            {
                EditorGUILayout.HelpBox(model.NoTargetReason ?? "no prebuilt bridge for this machine", MessageType.Info);
            }
            else if (model.Download == BridgeDownloadState.Downloading)
            {
                if (GUILayout.Button("Cancel the download"))
                {
                    presenter.CancelDownload();
                }
            }
            else if (GUILayout.Button("Download unity-mcp-bridge " + McpServerController.PackageVersion + " for " + model.Target))
            {
                presenter.Download();
            }
            if (model.DownloadStatus.Length > 0)
            {
                EditorGUILayout.HelpBox(model.DownloadStatus, model.Download == BridgeDownloadState.Failed ? MessageType.Error : MessageType.Info);
            }
        }
    }
}

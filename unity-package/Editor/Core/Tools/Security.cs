// The security checker of the seeds: settings a person controls in Unity's
// MCP settings window, checked before every tool call (§3 error shapes, §6
// settings). Default deny: run-tests, execute-menu-item, press-dialog-button
// and third-party tools stay blocked until a person allows them.

using System;
using System.Collections.Generic;

namespace UnityMcp.Core
{
    /// <summary>How much execute-dynamic-code may do.</summary>
    public enum DynamicCodeSecurityLevel
    {
        /// <summary>No dynamic code at all.</summary>
        Disabled,
        /// <summary>Code that only uses a vetted set of APIs.</summary>
        Restricted,
        /// <summary>Any code.</summary>
        FullAccess,
    }

    /// <summary>The security setting a tool needs before it runs (declared on its [McpTool]).</summary>
    public enum ToolGate
    {
        /// <summary>Runs whatever the settings say (but for third-party tools, off until allowed).</summary>
        None,
        /// <summary>Runs only with Enable Tests Execution.</summary>
        TestsExecution,
        /// <summary>Runs only with Allow Menu Item Execution.</summary>
        MenuItemExecution,
        /// <summary>Runs unless the dynamic code security level is Disabled.</summary>
        DynamicCode,
        /// <summary>Runs only with Allow Pressing Dialog Buttons.</summary>
        DialogButtons,
    }

    /// <summary>The security settings (§6).</summary>
    public sealed class SecuritySettings
    {
        public bool EnableTestsExecution;
        public bool AllowMenuItemExecution;
        /// <summary>
        /// press-dialog-button may answer a modal dialog of the Editor for a
        /// client (never Unity's Script Updating Consent). Off by default
        /// (allowPressingDialogButtons).
        /// </summary>
        public bool AllowPressingDialogButtons;
        public DynamicCodeSecurityLevel DynamicCodeSecurityLevel = DynamicCodeSecurityLevel.Restricted;
        /// <summary>Tools from other packages (assemblies) are blocked unless allowed.</summary>
        public bool AllowThirdPartyTools;
        /// <summary>Public tools switched off.</summary>
        public List<string> DisabledTools = new List<string>();
        /// <summary>
        /// Requests without this Editor's token (x-token) are answered too:
        /// for a legacy client that cannot read Library/MCPInstance.json.
        /// Off by default (allowClientsWithoutToken).
        /// </summary>
        public bool AllowClientsWithoutToken;
    }

    /// <summary>Checks a call against the settings before it runs.</summary>
    public sealed class SecurityChecker
    {
        readonly Func<SecuritySettings> settings;

        /// <param name="settings">The current settings (read at every check: they change while the Editor runs).</param>
        public SecurityChecker(Func<SecuritySettings> settings)
        {
            this.settings = settings;
        }

        /// <summary>The settings now.</summary>
        public SecuritySettings Settings => settings();

        /// <summary>Is the tool switched off (hidden from get-tool-details, refused)?</summary>
        public bool IsDisabled(IUnityTool tool)
        {
            return !tool.Info.DisplayDevelopmentOnly && settings().DisabledTools.Contains(tool.Info.Name);
        }

        /// <summary>Throws tool_disabled or security_blocked when the call may not run.</summary>
        public void Check(IUnityTool tool, bool isThirdParty)
        {
            var name = tool.Info.Name;
            if (IsDisabled(tool))
            {
                throw new RpcError(RpcErrorKind.ToolDisabled, "Tool '" + name + "' is disabled in settings").With("command", name);
            }
            var reason = BlockedBecause(tool.Info, isThirdParty, settings());
            if (reason != null)
            {
                throw new RpcError(RpcErrorKind.SecurityBlocked, reason).With("command", name).With("reason", reason);
            }
        }

        /// <summary>Why the settings block the tool, or null.</summary>
        public static string BlockedBecause(McpToolAttribute tool, bool isThirdParty, SecuritySettings settings)
        {
            if (isThirdParty && !settings.AllowThirdPartyTools)
            {
                return "Third-party tools are blocked. Enable 'Allow Third Party Tools' in the security settings to run " + tool.Name + ".";
            }
            switch (tool.Gate)
            {
                case ToolGate.TestsExecution:
                    return settings.EnableTestsExecution ? null : "Test execution is disabled. Enable 'Enable Tests Execution' in the security settings.";
                case ToolGate.MenuItemExecution:
                    return settings.AllowMenuItemExecution ? null : "Menu item execution is disabled. Enable 'Allow Menu Item Execution' in the security settings.";
                case ToolGate.DynamicCode:
                    return settings.DynamicCodeSecurityLevel != DynamicCodeSecurityLevel.Disabled ? null : "Dynamic code execution is disabled (security level Disabled).";
                case ToolGate.DialogButtons:
                    return settings.AllowPressingDialogButtons ? null : "Pressing the Editor's dialog buttons is disabled. Enable 'Allow Pressing Dialog Buttons' in the security settings.";
                default:
                    return null;
            }
        }
    }
}

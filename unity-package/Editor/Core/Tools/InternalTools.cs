// The internal tools of §6 (displayDevelopmentOnly: hidden from MCP tool
// lists by default, always callable): ping, set-client-name,
// get-tool-details, get-version, debug-sleep. (get-editor-state is no tool:
// the dispatcher answers it without the main thread.)

using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>What get-version reports of the Editor.</summary>
    public sealed class EditorInfo
    {
        public string UnityVersion = "";
        public string Platform = "";
        public string DataPath = "";
        public string ProductName = "";
        public string PackageVersion = "";

        /// <summary>
        /// This Editor process (extension): the same across domain reloads,
        /// new when Unity starts again. The resume journal belongs to it, so a
        /// client resumes a call only where this has not changed (after a
        /// crash, a new Editor would run the call again). Empty: not sent.
        /// </summary>
        public string InstanceId = "";

        /// <summary>From resume, progress, newline-framing, image-data (get-version adds editor-state, dialog-buttons and token where the dispatcher offers them).</summary>
        public string[] Capabilities = { "progress", "newline-framing", "image-data" };
    }

    public class PingParams
    {
        [Param("Message to send to Unity")]
        public string Message = "";
    }

    [McpTool("ping", Description = "Connection test and message echo", Order = 200, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class PingTool : UnityTool<PingParams>
    {
        protected override Task<JObject> Run(PingParams p, ToolContext context) =>
            Task.FromResult(new JObject { ["Message"] = "Unity MCP Bridge received: " + p.Message });
    }

    public class ClientNameParams
    {
        [Param("Name of the MCP client tool")]
        public string ClientName = "Unknown Client";
    }

    [McpTool("set-client-name", Description = "Register client name for identification in Unity", Order = 210, DisplayDevelopmentOnly = true, Idempotent = true)]
    public sealed class SetClientNameTool : UnityTool<ClientNameParams>
    {
        protected override Task<JObject> Run(ClientNameParams p, ToolContext context)
        {
            if (context.Connection != null)
            {
                context.Connection.ClientName = p.ClientName;
            }
            return Task.FromResult(new JObject { ["Message"] = "Client name set to: " + p.ClientName, ["ClientName"] = p.ClientName });
        }
    }

    public class ToolDetailsParams
    {
        [Param("Whether to include development-only tools")]
        public bool IncludeDevelopmentOnly;
    }

    [McpTool("get-tool-details", Description = "Retrieve detailed information about all registered Unity tools", Order = 220, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class GetToolDetailsTool : UnityTool<ToolDetailsParams>
    {
        protected override Task<JObject> Run(ToolDetailsParams p, ToolContext context)
        {
            var tools = new JArray();
            var dispatcher = context.Dispatcher;
            foreach (var tool in dispatcher.Registry.All)
            {
                var info = tool.Info;
                if ((info.DisplayDevelopmentOnly && !p.IncludeDevelopmentOnly) || dispatcher.Security.IsDisabled(tool) || !dispatcher.Offers(tool))
                {
                    continue;
                }
                var entry = new JObject
                {
                    ["name"] = info.Name,
                    ["description"] = info.Description,
                    ["parameterSchema"] = tool.ParameterSchema.DeepClone(),
                    ["displayDevelopmentOnly"] = info.DisplayDevelopmentOnly,
                    ["annotations"] = new JObject
                    {
                        ["readOnlyHint"] = info.ReadOnly,
                        ["destructiveHint"] = info.Destructive,
                        ["idempotentHint"] = info.Idempotent,
                        ["openWorldHint"] = false,
                    },
                };
                entry["timeoutSeconds"] = info.TimeoutSeconds;
                tools.Add(entry);
            }
            return Task.FromResult(new JObject { ["Tools"] = tools });
        }
    }

    public class NoParameters
    {
    }

    [McpTool("get-version", Description = "Get Unity version, platform and package information", Order = 230, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class GetVersionTool : UnityTool<NoParameters>
    {
        protected override Task<JObject> Run(NoParameters p, ToolContext context)
        {
            var info = context.Dispatcher.Editor;
            var result = new JObject
            {
                ["UnityVersion"] = info.UnityVersion,
                ["Platform"] = info.Platform,
                ["DataPath"] = info.DataPath,
                ["ProductName"] = info.ProductName,
                ["PackageVersion"] = info.PackageVersion,
                ["ProtocolVersion"] = DiscoveryFile.ProtocolVersion,
            };
            if (!string.IsNullOrEmpty(info.InstanceId))
            {
                result["EditorInstanceId"] = info.InstanceId;
            }
            result["Capabilities"] = new JArray(context.Dispatcher.Capabilities().ToArray());
            return Task.FromResult(result);
        }
    }

    public class DebugSleepParams
    {
        [Param("Number of seconds to sleep for testing purposes", Min = 0, Max = 86400)]
        public double SleepSeconds = 15;
    }

    [McpTool("debug-sleep", Description = "Debug tool that sleeps for specified duration to test timeout functionality", Order = 240, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true, TimeoutSeconds = 10)]
    public sealed class DebugSleepTool : UnityTool<DebugSleepParams>
    {
        protected override async Task<JObject> Run(DebugSleepParams p, ToolContext context)
        {
            var cancelled = false;
            var watch = System.Diagnostics.Stopwatch.StartNew();
            try
            {
                await Task.Delay(System.TimeSpan.FromSeconds(p.SleepSeconds), context.Cancellation).ConfigureAwait(false);
            }
            catch (TaskCanceledException)
            {
                cancelled = true;
            }
            var slept = cancelled ? watch.Elapsed.TotalSeconds : p.SleepSeconds;
            return new JObject
            {
                ["Message"] = cancelled ? "Sleep cancelled after " + ToolSchema.Number(slept) + " seconds" : "Successfully slept for " + ToolSchema.Number(p.SleepSeconds) + " seconds",
                ["ActualSleepSeconds"] = slept,
                ["WasCancelled"] = cancelled,
            };
        }
    }
}

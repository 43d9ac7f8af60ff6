// The internal tools of §6 (displayDevelopmentOnly: hidden from MCP tool
// lists by default, always callable): ping, set-client-name,
// get-tool-details, get-version.

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

        /// <summary>From resume, progress, newline-framing, image-data.</summary>
        public string[] Capabilities = { "progress", "newline-framing", "image-data" };
    }

    public class PingParams
    {
        [Param("Text to echo")]
        public string Message = "";
    }

    [McpTool("ping", Description = "Connectivity test: echoes the message", DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class PingTool : UnityTool<PingParams>
    {
        protected override Task<JObject> Run(PingParams p, ToolContext context) =>
            Task.FromResult(new JObject { ["Message"] = "Unity MCP Bridge received: " + p.Message });
    }

    public class ClientNameParams
    {
        [Param("The client's name, shown in the Editor window")]
        public string ClientName = "Unknown Client";
    }

    [McpTool("set-client-name", Description = "Names the calling client (for the Editor window)", DisplayDevelopmentOnly = true, Idempotent = true)]
    public sealed class SetClientNameTool : UnityTool<ClientNameParams>
    {
        protected override Task<JObject> Run(ClientNameParams p, ToolContext context)
        {
            if (context.Connection != null)
            {
                context.Connection.ClientName = p.ClientName;
            }
            return Task.FromResult(new JObject { ["Message"] = "Client name set to " + p.ClientName, ["ClientName"] = p.ClientName });
        }
    }

    public class ToolDetailsParams
    {
        [Param("Also list the internal tools")]
        public bool IncludeDevelopmentOnly;
    }

    [McpTool("get-tool-details", Description = "Every tool with its parameter schema", DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class GetToolDetailsTool : UnityTool<ToolDetailsParams>
    {
        protected override Task<JObject> Run(ToolDetailsParams p, ToolContext context)
        {
            var tools = new JArray();
            var dispatcher = context.Dispatcher;
            foreach (var tool in dispatcher.Registry.All)
            {
                var info = tool.Info;
                if ((info.DisplayDevelopmentOnly && !p.IncludeDevelopmentOnly) || dispatcher.Security.IsDisabled(tool))
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
                    },
                };
                if (info.TimeoutSeconds > 0)
                {
                    entry["timeoutSeconds"] = info.TimeoutSeconds;
                }
                tools.Add(entry);
            }
            return Task.FromResult(new JObject { ["Tools"] = tools });
        }
    }

    public class NoParameters
    {
    }

    [McpTool("get-version", Description = "Unity, package and protocol versions, and what the Editor can do", DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class GetVersionTool : UnityTool<NoParameters>
    {
        protected override Task<JObject> Run(NoParameters p, ToolContext context)
        {
            var info = context.Dispatcher.Editor;
            return Task.FromResult(new JObject
            {
                ["UnityVersion"] = info.UnityVersion,
                ["Platform"] = info.Platform,
                ["DataPath"] = info.DataPath,
                ["ProductName"] = info.ProductName,
                ["PackageVersion"] = info.PackageVersion,
                ["ProtocolVersion"] = DiscoveryFile.ProtocolVersion,
                ["Capabilities"] = new JArray(info.Capabilities),
            });
        }
    }
}

// The internal tools of §6 (displayDevelopmentOnly: hidden from MCP tool
// lists by default, always callable): ping, set-client-name,
// get-tool-details, get-version, debug-sleep. (get-editor-state is no tool:
// the dispatcher answers it without the main thread.)

using System.Collections.Generic;
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

        /// <summary>From resume, progress, newline-framing, image-data (get-version adds output-schema, and editor-state, dialog-buttons and token where the dispatcher offers them).</summary>
        public string[] Capabilities = { "progress", "newline-framing", "image-data" };
    }

    public class PingParams
    {
        [Param("Message to send to Unity")]
        public string Message = "";
    }

    public class PingResult
    {
        public string Message;
    }

    [McpTool("ping", Description = "Connection test and message echo", Order = 200, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class PingTool : UnityTool<PingParams, PingResult>
    {
        protected override Task<PingResult> Answer(PingParams p, ToolContext context) =>
            Task.FromResult(new PingResult { Message = "Unity MCP Bridge received: " + p.Message });
    }

    public class ClientNameParams
    {
        [Param("Name of the MCP client tool")]
        public string ClientName = "Unknown Client";
    }

    public class ClientNameResult
    {
        public string Message;
        public string ClientName;
    }

    [McpTool("set-client-name", Description = "Register client name for identification in Unity", Order = 210, DisplayDevelopmentOnly = true, Idempotent = true)]
    public sealed class SetClientNameTool : UnityTool<ClientNameParams, ClientNameResult>
    {
        protected override Task<ClientNameResult> Answer(ClientNameParams p, ToolContext context)
        {
            if (context.Connection != null)
            {
                context.Connection.ClientName = p.ClientName;
            }
            return Task.FromResult(new ClientNameResult { Message = "Client name set to: " + p.ClientName, ClientName = p.ClientName });
        }
    }

    public class ToolDetailsParams
    {
        [Param("Whether to include development-only tools")]
        public bool IncludeDevelopmentOnly;
    }

    /// <summary>MCP's tool annotations (extension tool-metadata).</summary>
    public class ToolAnnotations
    {
        public bool readOnlyHint;
        public bool destructiveHint;
        public bool idempotentHint;
        public bool openWorldHint;
    }

    /// <summary>A tool as get-tool-details lists it (§6).</summary>
    public class ToolDetails
    {
        public string name;
        public string description;

        /// <summary>Its parameters (Properties, Required): see ToolSchema.Of.</summary>
        public JObject parameterSchema;

        public bool displayDevelopmentOnly;

        /// <summary>Extension tool-metadata.</summary>
        public ToolAnnotations annotations;

        /// <summary>Extension tool-metadata: the default deadline.</summary>
        public double timeoutSeconds;

        /// <summary>Extension output-schema: a JSON Schema of its result (absent: none promised).</summary>
        [OmitWhenNull]
        public JObject outputSchema;
    }

    public class ToolDetailsResult
    {
        public List<ToolDetails> Tools = new List<ToolDetails>();
    }

    [McpTool("get-tool-details", Description = "Retrieve detailed information about all registered Unity tools", Order = 220, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class GetToolDetailsTool : UnityTool<ToolDetailsParams, ToolDetailsResult>
    {
        protected override Task<ToolDetailsResult> Answer(ToolDetailsParams p, ToolContext context)
        {
            var result = new ToolDetailsResult();
            var dispatcher = context.Dispatcher;
            foreach (var tool in dispatcher.Registry.All)
            {
                var info = tool.Info;
                if ((info.DisplayDevelopmentOnly && !p.IncludeDevelopmentOnly) || dispatcher.Security.IsDisabled(tool) || !dispatcher.Offers(tool))
                {
                    continue;
                }
                var outputSchema = ToolResults.OutputSchemaOf(tool);
                result.Tools.Add(new ToolDetails
                {
                    name = info.Name,
                    description = info.Description,
                    parameterSchema = (JObject)tool.ParameterSchema.DeepClone(),
                    displayDevelopmentOnly = info.DisplayDevelopmentOnly,
                    annotations = new ToolAnnotations
                    {
                        readOnlyHint = info.ReadOnly,
                        destructiveHint = info.Destructive,
                        idempotentHint = info.Idempotent,
                        openWorldHint = false,
                    },
                    timeoutSeconds = info.TimeoutSeconds,
                    outputSchema = outputSchema != null ? (JObject)outputSchema.DeepClone() : null,
                });
            }
            return Task.FromResult(result);
        }
    }

    public class NoParameters
    {
    }

    public class VersionResult
    {
        public string UnityVersion;
        public string Platform;
        public string DataPath;
        public string ProductName;
        public string PackageVersion;

        /// <summary>Extension capabilities.</summary>
        public int ProtocolVersion;

        /// <summary>Extension capabilities (§5); absent when the Editor has none.</summary>
        [OmitWhenNull]
        public string EditorInstanceId;

        /// <summary>Extension capabilities: the extensions offered.</summary>
        public List<string> Capabilities = new List<string>();
    }

    [McpTool("get-version", Description = "Get Unity version, platform and package information", Order = 230, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true)]
    public sealed class GetVersionTool : UnityTool<NoParameters, VersionResult>
    {
        protected override Task<VersionResult> Answer(NoParameters p, ToolContext context)
        {
            var info = context.Dispatcher.Editor;
            return Task.FromResult(new VersionResult
            {
                UnityVersion = info.UnityVersion,
                Platform = info.Platform,
                DataPath = info.DataPath,
                ProductName = info.ProductName,
                PackageVersion = info.PackageVersion,
                ProtocolVersion = DiscoveryFile.ProtocolVersion,
                EditorInstanceId = string.IsNullOrEmpty(info.InstanceId) ? null : info.InstanceId,
                Capabilities = context.Dispatcher.Capabilities(),
            });
        }
    }

    public class DebugSleepParams
    {
        [Param("Number of seconds to sleep for testing purposes", Min = 0, Max = 86400)]
        public double SleepSeconds = 15;
    }

    public class DebugSleepResult
    {
        public string Message;
        public double ActualSleepSeconds;
        public bool WasCancelled;
    }

    [McpTool("debug-sleep", Description = "Debug tool that sleeps for specified duration to test timeout functionality", Order = 240, DisplayDevelopmentOnly = true, ReadOnly = true, Idempotent = true, TimeoutSeconds = 10)]
    public sealed class DebugSleepTool : UnityTool<DebugSleepParams, DebugSleepResult>
    {
        protected override async Task<DebugSleepResult> Answer(DebugSleepParams p, ToolContext context)
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
            return new DebugSleepResult
            {
                Message = cancelled ? "Sleep cancelled after " + ToolSchema.Number(slept) + " seconds" : "Successfully slept for " + ToolSchema.Number(p.SleepSeconds) + " seconds",
                ActualSleepSeconds = slept,
                WasCancelled = cancelled,
            };
        }
    }
}

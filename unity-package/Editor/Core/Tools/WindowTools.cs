// The Editor's windows and play mode (§6): focus-window,
// control-play-mode and screenshot.

using System;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public enum PlayAction
    {
        Play,
        Stop,
        Pause,
    }

    [McpTool("focus-window", Description = "Brings Unity Editor window to front on macOS and Windows", Order = 120, Idempotent = true)]
    public sealed class FocusWindowTool : UnityTool<NoParameters>
    {
        protected override Task<JObject> Run(NoParameters p, ToolContext context)
        {
            string message;
            try
            {
                message = context.Editor.FocusWindow();
            }
            catch (InvalidOperationException e)
            {
                return Task.FromResult(new JObject { ["Success"] = false, ["Message"] = "", ["ErrorMessage"] = e.Message });
            }
            return Task.FromResult(new JObject { ["Success"] = true, ["Message"] = message, ["ErrorMessage"] = "" });
        }
    }

    public class PlayModeParams
    {
        [Param("Play mode action")]
        public PlayAction Action = PlayAction.Play;
    }

    [McpTool("control-play-mode", Description = "Controls Unity Editor play mode (Play, Stop, Pause)", Order = 130, Idempotent = true)]
    public sealed class ControlPlayModeTool : UnityTool<PlayModeParams>
    {
        protected override Task<JObject> Run(PlayModeParams p, ToolContext context)
        {
            var editor = context.Editor;
            var message = editor.ApplyPlayAction(p.Action);
            return Task.FromResult(new JObject { ["IsPlaying"] = editor.IsPlaying, ["IsPaused"] = editor.IsPaused, ["Message"] = message });
        }
    }

    public class ScreenshotParams
    {
        [Param("Name of the window to capture")]
        public string WindowName = "Game";

        [Param("Scale of the captured image (0.1 to 1.0)", Min = 0.1, Max = 1.0)]
        public double ResolutionScale = 1.0;

        [Param("Also return the PNG as base64 in ImageDataBase64")]
        public bool IncludeImageData;
    }

    [McpTool("screenshot", Description = "Captures an Editor window (Game, Scene …) as a PNG file", Order = 140, ReadOnly = true)]
    public sealed class ScreenshotTool : UnityTool<ScreenshotParams>
    {
        protected override Task<JObject> Run(ScreenshotParams p, ToolContext context)
        {
            var editor = context.Editor;
            var windows = editor.Windows();
            var window = windows.FirstOrDefault(w => string.Equals(w, p.WindowName, StringComparison.OrdinalIgnoreCase));
            if (window == null)
            {
                return Task.FromResult(new JObject
                {
                    ["Screenshots"] = new JArray(),
                    ["ScreenshotCount"] = 0,
                    ["Message"] = "Window '" + p.WindowName + "' is not open. Open windows: " + string.Join(", ", windows.ToArray()),
                });
            }
            var capture = editor.CaptureWindow(window, p.ResolutionScale);
            var path = OutputFiles.Write(editor.ProjectPath, "Screenshots", window.Replace(' ', '_'), "png", capture.Png);
            var shot = new JObject { ["ImagePath"] = path, ["Width"] = capture.Width, ["Height"] = capture.Height, ["FileSizeBytes"] = capture.Png.Length };
            if (p.IncludeImageData)
            {
                shot["ImageDataBase64"] = Convert.ToBase64String(capture.Png);
            }
            return Task.FromResult(new JObject
            {
                ["Screenshots"] = new JArray(shot),
                ["ScreenshotCount"] = 1,
                ["Message"] = "Captured the " + window + " window (" + capture.Width + "x" + capture.Height + ")",
            });
        }
    }
}

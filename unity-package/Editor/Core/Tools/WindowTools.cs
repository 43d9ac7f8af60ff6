// The Editor's windows and play mode (§6): focus-window,
// control-play-mode and screenshot.

using System;
using System.Collections.Generic;
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

    public class FocusWindowResult
    {
        public bool Success;
        public string Message;
        public string ErrorMessage;
    }

    [McpTool("focus-window", Description = "Brings Unity Editor window to front on macOS and Windows", Order = 120, Idempotent = true)]
    public sealed class FocusWindowTool : UnityTool<NoParameters, FocusWindowResult>
    {
        protected override Task<FocusWindowResult> Answer(NoParameters p, ToolContext context)
        {
            string message;
            try
            {
                message = context.Editor.FocusWindow();
            }
            catch (InvalidOperationException e)
            {
                return Task.FromResult(new FocusWindowResult { Success = false, Message = "", ErrorMessage = e.Message });
            }
            return Task.FromResult(new FocusWindowResult { Success = true, Message = message, ErrorMessage = "" });
        }
    }

    public class PlayModeParams
    {
        [Param("Play mode action")]
        public PlayAction Action = PlayAction.Play;
    }

    public class PlayModeResult
    {
        public bool IsPlaying;
        public bool IsPaused;
        public string Message;
    }

    [McpTool("control-play-mode", Description = "Controls Unity Editor play mode (Play, Stop, Pause)", Order = 130, Idempotent = true)]
    public sealed class ControlPlayModeTool : UnityTool<PlayModeParams, PlayModeResult>
    {
        protected override Task<PlayModeResult> Answer(PlayModeParams p, ToolContext context)
        {
            var editor = context.Editor;
            var message = editor.ApplyPlayAction(p.Action);
            return Task.FromResult(new PlayModeResult { IsPlaying = editor.IsPlaying, IsPaused = editor.IsPaused, Message = message });
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

    public class Screenshot
    {
        /// <summary>The PNG's project-relative path.</summary>
        public string ImagePath;
        public int Width;
        public int Height;
        public int FileSizeBytes;

        /// <summary>Extension image-data: the PNG in base64, only with IncludeImageData.</summary>
        [OmitWhenNull]
        public string ImageDataBase64;
    }

    public class ScreenshotResult
    {
        public List<Screenshot> Screenshots = new List<Screenshot>();
        public int ScreenshotCount;
        public string Message;
    }

    [McpTool("screenshot", Description = "Captures an Editor window (Game, Scene …) as a PNG file", Order = 140, ReadOnly = true)]
    public sealed class ScreenshotTool : UnityTool<ScreenshotParams, ScreenshotResult>
    {
        protected override Task<ScreenshotResult> Answer(ScreenshotParams p, ToolContext context)
        {
            var editor = context.Editor;
            var windows = editor.Windows();
            var window = windows.FirstOrDefault(w => string.Equals(w, p.WindowName, StringComparison.OrdinalIgnoreCase));
            if (window == null)
            {
                return Task.FromResult(new ScreenshotResult
                {
                    Screenshots = new List<Screenshot>(),
                    ScreenshotCount = 0,
                    Message = "Window '" + p.WindowName + "' is not open. Open windows: " + string.Join(", ", windows.ToArray()),
                });
            }
            var capture = editor.CaptureWindow(window, p.ResolutionScale);
            var path = OutputFiles.Write(editor.ProjectPath, "Screenshots", window.Replace(' ', '_'), "png", capture.Png);
            var shot = new Screenshot
            {
                ImagePath = path,
                Width = capture.Width,
                Height = capture.Height,
                FileSizeBytes = capture.Png.Length,
                ImageDataBase64 = p.IncludeImageData ? Convert.ToBase64String(capture.Png) : null,
            };
            return Task.FromResult(new ScreenshotResult
            {
                Screenshots = new List<Screenshot> { shot },
                ScreenshotCount = 1,
                Message = "Captured the " + window + " window (" + capture.Width + "x" + capture.Height + ")",
            });
        }
    }
}

// press-dialog-button (§6, extension dialog-buttons): presses a button of
// the modal dialog get-editor-state reports. It runs on a worker, as every
// tool does, and asks nothing of the main thread (the dialog holds it): the
// click is posted to the dialog, whose modal loop handles it. Offered only
// where the platform lets the package see the Editor's dialogs (Windows);
// gated by Allow Pressing Dialog Buttons (off by default); never for Unity's
// Script Updating Consent dialog, which the user answers.

using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    public class PressDialogButtonParams
    {
        [Param("The button to press: its text exactly as get-editor-state reports it in Dialog.Buttons")]
        public string Button = "";

        [Param("The dialog's title: press only if the dialog shown has this title (empty: whichever get-editor-state reports)")]
        public string Title = "";
    }

    public class PressDialogButtonResult
    {
        /// <summary>The button's text.</summary>
        public string Pressed;

        /// <summary>The dialog's title.</summary>
        public string Title;
    }

    [McpTool(ModalDialogs.PressTool, Description = "Presses a button of the modal dialog that holds the Unity Editor's main thread (the one get-editor-state reports), without waiting for the main thread. Never presses in Unity's Script Updating Consent dialog",
        Order = 150, Destructive = true, TimeoutSeconds = 10, Gate = ToolGate.DialogButtons, Extension = ModalDialogs.Capability)]
    public sealed class PressDialogButtonTool : UnityTool<PressDialogButtonParams, PressDialogButtonResult>
    {
        protected override Task<PressDialogButtonResult> Answer(PressDialogButtonParams p, ToolContext context)
        {
            var state = context.Dispatcher != null ? context.Dispatcher.EditorState : null;
            if (state == null)
            {
                throw new RpcError(RpcErrorKind.InternalError, "this server does not watch the Editor's main thread");
            }
            var pressed = state.Dialogs.Press(p.Button, p.Title);
            return Task.FromResult(new PressDialogButtonResult { Pressed = pressed.Button, Title = pressed.Title });
        }
    }
}

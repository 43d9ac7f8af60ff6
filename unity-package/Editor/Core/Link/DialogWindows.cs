// The modal dialog the Editor shows (§6: get-editor-state's Dialog, and
// press-dialog-button of extension dialog-buttons), where the platform lets
// the package see one: on Windows, a dialog window (class #32770) of the
// Editor's main thread and its push buttons, read through user32 without
// ever waiting for that thread (which the dialog holds). Which dialog is
// reported, which one is Unity's Script Updating Consent, and what a press
// is refused for is decided here, on plain data (IDialogWindows), so it is
// tested with a fake; Win32DialogWindows is the platform's side.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.InteropServices;
using System.Text;

namespace UnityMcp.Core
{
    /// <summary>A button of a dialog window.</summary>
    public sealed class DialogButton
    {
        /// <summary>The platform's handle (Windows: the HWND).</summary>
        public long Handle;

        /// <summary>Its text as the platform holds it (Windows: with its &amp; mnemonic).</summary>
        public string RawText = "";

        public bool Enabled = true;

        /// <summary>Its text as get-editor-state reports it: without the mnemonic marks (&amp;Yes is Yes, &amp;&amp; is &amp;).</summary>
        public string Text => DialogText.WithoutMnemonics(RawText);
    }

    /// <summary>A visible dialog window of the Editor's main thread.</summary>
    public sealed class DialogWindow
    {
        /// <summary>The platform's handle (Windows: the HWND).</summary>
        public long Handle;

        public string Title = "";

        /// <summary>False while it waits for a dialog it opened (Windows disables a modal dialog's owner).</summary>
        public bool Enabled = true;

        /// <summary>Its push buttons, in the platform's order.</summary>
        public List<DialogButton> Buttons = new List<DialogButton>();
    }

    /// <summary>The Editor's dialog windows, as the platform shows them to the package. Any thread; never waits for the main thread.</summary>
    public interface IDialogWindows
    {
        /// <summary>Whether <see cref="Press"/> works here (extension dialog-buttons).</summary>
        bool CanPress { get; }

        /// <summary>The visible dialog windows of the Editor's main thread, topmost first.</summary>
        List<DialogWindow> Visible();

        /// <summary>Presses the button (its click is posted: this does not wait for the dialog).</summary>
        void Press(DialogWindow dialog, DialogButton button);
    }

    /// <summary>Button texts as a dialog shows them.</summary>
    public static class DialogText
    {
        /// <summary>A Windows control text without its mnemonic marks: "&amp;Yes" is "Yes", "Save &amp;&amp; Quit" is "Save &amp; Quit".</summary>
        public static string WithoutMnemonics(string raw)
        {
            if (string.IsNullOrEmpty(raw) || raw.IndexOf('&') < 0)
            {
                return raw ?? "";
            }
            var text = new StringBuilder(raw.Length);
            for (var i = 0; i < raw.Length; i++)
            {
                if (raw[i] == '&' && i + 1 < raw.Length)
                {
                    // The next character is shown (underlined, or a literal & for &&).
                    i++;
                }
                else if (raw[i] == '&')
                {
                    // A trailing & is dropped, as Windows draws nothing for it.
                    continue;
                }
                text.Append(raw[i]);
            }
            return text.ToString();
        }
    }

    /// <summary>The dialog get-editor-state reports.</summary>
    public sealed class ShownDialog
    {
        internal ShownDialog(DialogWindow window)
        {
            Window = window;
        }

        public DialogWindow Window { get; }

        public string Title => Window.Title;

        /// <summary>Its buttons' texts, in order, as reported (and as press-dialog-button takes them).</summary>
        public List<string> ButtonTexts => Window.Buttons.Select(b => b.Text).ToList();

        /// <summary>Unity's Script Updating Consent: its "Yes" lets the API updater rewrite the user's scripts.</summary>
        public bool RewritesScripts => ModalDialogs.IsScriptUpdatingConsent(Window.Title);
    }

    /// <summary>What press-dialog-button pressed.</summary>
    public sealed class DialogPress
    {
        public string Button = "";
        public string Title = "";
    }

    /// <summary>Which dialog the Editor shows, and the pressing of its buttons.</summary>
    public sealed class ModalDialogs
    {
        /// <summary>The extension's name in Capabilities (press-dialog-button).</summary>
        public const string Capability = "dialog-buttons";

        /// <summary>The title of Unity's dialog that asks whether the API updater may rewrite scripts.</summary>
        public const string ScriptUpdatingConsent = "Script Updating Consent";

        /// <summary>The tool that presses.</summary>
        public const string PressTool = "press-dialog-button";

        readonly IDialogWindows windows;

        /// <param name="windows">The platform's dialog windows; null where it shows none to the package.</param>
        public ModalDialogs(IDialogWindows windows)
        {
            this.windows = windows;
        }

        /// <summary>Whether the platform shows the package the Editor's dialogs (Windows).</summary>
        public bool Supported => windows != null;

        /// <summary>Whether it also lets the package press their buttons (Windows): press-dialog-button is offered.</summary>
        public bool CanPress => windows != null && windows.CanPress;

        /// <summary>Whether a dialog with this title is Unity's Script Updating Consent (a press is always refused there).</summary>
        public static bool IsScriptUpdatingConsent(string title)
        {
            return title != null && title.IndexOf(ScriptUpdatingConsent, StringComparison.OrdinalIgnoreCase) >= 0;
        }

        /// <summary>
        /// The dialog to report, of the visible ones (topmost first): the
        /// first that is enabled and has buttons — the one waiting for an
        /// answer (a dialog that opened another is disabled until it
        /// closes) — else the first with buttons, else the first. Null when
        /// none is shown.
        /// </summary>
        public static DialogWindow Select(IList<DialogWindow> visible)
        {
            if (visible == null || visible.Count == 0)
            {
                return null;
            }
            return visible.FirstOrDefault(d => d.Enabled && d.Buttons.Count > 0)
                ?? visible.FirstOrDefault(d => d.Buttons.Count > 0)
                ?? visible[0];
        }

        /// <summary>The dialog the Editor shows, or null (none, or the platform does not say). Never throws.</summary>
        public ShownDialog Shown()
        {
            if (windows == null)
            {
                return null;
            }
            List<DialogWindow> visible;
            try
            {
                visible = windows.Visible();
            }
            catch (Exception)
            {
                // The platform would not say: get-editor-state answers without a Dialog.
                return null;
            }
            var chosen = Select(visible);
            return chosen == null ? null : new ShownDialog(chosen);
        }

        static string Quoted(IEnumerable<string> texts)
        {
            return string.Join(", ", texts.Select(t => "\"" + t + "\"").ToArray());
        }

        static RpcError Invalid(string parameter, string message)
        {
            return new RpcError(RpcErrorKind.InvalidParams, message).With("parameter", parameter);
        }

        /// <summary>
        /// Presses <paramref name="button"/> (its text as reported) in the
        /// dialog shown, only if its title is <paramref name="title"/> when
        /// one is given. Refused (security_blocked) for the Script Updating
        /// Consent dialog; invalid_params naming the buttons there are when
        /// there is no dialog, another one, or no such button.
        /// </summary>
        public DialogPress Press(string button, string title)
        {
            if (!CanPress)
            {
                throw new RpcError(RpcErrorKind.InternalError, "This platform does not let the package press the Editor's dialog buttons (only Windows does)");
            }
            var shown = Shown();
            if (shown == null)
            {
                throw Invalid("Button", "The Editor shows no dialog: there are no buttons to press");
            }
            var buttons = shown.ButtonTexts;
            if (!string.IsNullOrEmpty(title) && !string.Equals(shown.Title, title, StringComparison.Ordinal))
            {
                throw Invalid("Title", "The dialog shown is \"" + shown.Title + "\" (buttons: " + Quoted(buttons) + "), not \"" + title + "\"");
            }
            if (shown.RewritesScripts)
            {
                var reason = "The dialog \"" + shown.Title + "\" asks whether Unity's API updater may rewrite the project's scripts: the user answers it in Unity, never a client.";
                throw new RpcError(RpcErrorKind.SecurityBlocked, reason).With("command", PressTool).With("reason", reason);
            }
            var match = shown.Window.Buttons.FirstOrDefault(b => string.Equals(b.Text, button ?? "", StringComparison.Ordinal));
            if (match == null)
            {
                throw Invalid("Button", "The dialog \"" + shown.Title + "\" has no button \"" + (button ?? "") + "\"; its buttons: " + (buttons.Count > 0 ? Quoted(buttons) : "none"));
            }
            if (!match.Enabled)
            {
                throw Invalid("Button", "The button \"" + match.Text + "\" of the dialog \"" + shown.Title + "\" is disabled; its buttons: " + Quoted(buttons));
            }
            windows.Press(shown.Window, match);
            return new DialogPress { Button = match.Text, Title = shown.Title };
        }
    }

    /// <summary>
    /// The dialog windows of one thread (the Editor's main thread) through
    /// user32, on Windows. Only calls that never send a message to that
    /// thread: a window's text is read with InternalGetWindowText, not
    /// GetWindowText (which sends WM_GETTEXT to a window of its own process
    /// and so would wait for a main thread stuck in a script); a press is
    /// posted, not sent.
    /// </summary>
    public sealed class Win32DialogWindows : IDialogWindows
    {
        /// <summary>The window class of a dialog box.</summary>
        public const string DialogClass = "#32770";

        const string ButtonClass = "Button";
        const int GwlStyle = -16;
        const uint WmCommand = 0x0111;
        const int BnClicked = 0;

        readonly uint threadId;

        Win32DialogWindows(uint threadId)
        {
            this.threadId = threadId;
        }

        public bool CanPress => true;

        /// <summary>Whether this process runs on Windows.</summary>
        public static bool IsWindows => Environment.OSVersion.Platform == PlatformID.Win32NT;

        /// <summary>
        /// The dialogs of the calling thread: call it on the Editor's main
        /// thread (its native id is taken there). Null off Windows, or where
        /// Windows will not say the thread's id (then no dialog is reported
        /// and none can be pressed; nothing else changes).
        /// </summary>
        public static Win32DialogWindows OfCurrentThread()
        {
            if (!IsWindows)
            {
                return null;
            }
            try
            {
                return new Win32DialogWindows(GetCurrentThreadId());
            }
            catch (Exception)
            {
                return null;
            }
        }

        /// <summary>
        /// Whether a Button control of this style (GWL_STYLE) is one a user
        /// presses: push buttons, split buttons, command links and
        /// owner-drawn or user buttons, not check boxes, radio buttons or
        /// group boxes (BS_TYPEMASK values 2 to 7 and 9).
        /// </summary>
        public static bool IsPushButtonStyle(int style)
        {
            switch (style & 0xF)
            {
                case 0x2: // BS_CHECKBOX
                case 0x3: // BS_AUTOCHECKBOX
                case 0x4: // BS_RADIOBUTTON
                case 0x5: // BS_3STATE
                case 0x6: // BS_AUTO3STATE
                case 0x7: // BS_GROUPBOX
                case 0x9: // BS_AUTORADIOBUTTON
                    return false;
                default:
                    return true;
            }
        }

        public List<DialogWindow> Visible()
        {
            var handles = new List<IntPtr>();
            EnumWindowsProc collect = (hwnd, _) =>
            {
                handles.Add(hwnd);
                return true;
            };
            // Top-level windows of the thread, in Z order (topmost first).
            EnumThreadWindows(threadId, collect, IntPtr.Zero);
            GC.KeepAlive(collect);
            var dialogs = new List<DialogWindow>();
            foreach (var hwnd in handles)
            {
                if (ClassOf(hwnd) != DialogClass || !IsWindowVisible(hwnd))
                {
                    continue;
                }
                dialogs.Add(new DialogWindow
                {
                    Handle = hwnd.ToInt64(),
                    Title = TextOf(hwnd),
                    Enabled = IsWindowEnabled(hwnd),
                    Buttons = ButtonsOf(hwnd),
                });
            }
            return dialogs;
        }

        static List<DialogButton> ButtonsOf(IntPtr dialog)
        {
            var children = new List<IntPtr>();
            EnumWindowsProc collect = (hwnd, _) =>
            {
                children.Add(hwnd);
                return true;
            };
            // Every descendant, in order (a button inside a panel too).
            EnumChildWindows(dialog, collect, IntPtr.Zero);
            GC.KeepAlive(collect);
            var buttons = new List<DialogButton>();
            foreach (var hwnd in children)
            {
                if (!string.Equals(ClassOf(hwnd), ButtonClass, StringComparison.OrdinalIgnoreCase) || !IsWindowVisible(hwnd)
                    || !IsPushButtonStyle(GetWindowLong(hwnd, GwlStyle)))
                {
                    continue;
                }
                buttons.Add(new DialogButton { Handle = hwnd.ToInt64(), RawText = TextOf(hwnd), Enabled = IsWindowEnabled(hwnd) });
            }
            return buttons;
        }

        /// <summary>
        /// Posts the button's click to the window it notifies (WM_COMMAND,
        /// BN_CLICKED, as a click sends): the dialog handles it once its
        /// thread reads its queue, as the modal loop does. BM_CLICK is not
        /// used: it may fail while the dialog is not the active window,
        /// which it is not when a client presses.
        /// </summary>
        public void Press(DialogWindow dialog, DialogButton button)
        {
            var hwnd = new IntPtr(button.Handle);
            var parent = GetParent(hwnd);
            if (parent == IntPtr.Zero)
            {
                parent = new IntPtr(dialog.Handle);
            }
            var id = GetDlgCtrlID(hwnd);
            var wParam = new IntPtr((BnClicked << 16) | (id & 0xFFFF));
            if (!PostMessage(parent, WmCommand, wParam, hwnd))
            {
                throw new InvalidOperationException("Windows refused to post the click (error " + Marshal.GetLastWin32Error() + ")");
            }
        }

        static string ClassOf(IntPtr hwnd)
        {
            var name = new StringBuilder(256);
            var length = GetClassName(hwnd, name, name.Capacity);
            return length > 0 ? name.ToString(0, Math.Min(length, name.Length)) : "";
        }

        static string TextOf(IntPtr hwnd)
        {
            var text = new StringBuilder(1024);
            var length = InternalGetWindowText(hwnd, text, text.Capacity);
            return length > 0 ? text.ToString(0, Math.Min(length, text.Length)) : "";
        }

        delegate bool EnumWindowsProc(IntPtr hwnd, IntPtr lParam);

        [DllImport("kernel32.dll", EntryPoint = "GetCurrentThreadId", ExactSpelling = true)]
        static extern uint GetCurrentThreadId();

        [DllImport("user32.dll", EntryPoint = "EnumThreadWindows", ExactSpelling = true)]
        [return: MarshalAs(UnmanagedType.Bool)]
        static extern bool EnumThreadWindows(uint threadId, EnumWindowsProc callback, IntPtr lParam);

        [DllImport("user32.dll", EntryPoint = "EnumChildWindows", ExactSpelling = true)]
        [return: MarshalAs(UnmanagedType.Bool)]
        static extern bool EnumChildWindows(IntPtr parent, EnumWindowsProc callback, IntPtr lParam);

        [DllImport("user32.dll", EntryPoint = "GetClassNameW", CharSet = CharSet.Unicode, ExactSpelling = true)]
        static extern int GetClassName(IntPtr hwnd, StringBuilder className, int maxCount);

        [DllImport("user32.dll", EntryPoint = "InternalGetWindowText", CharSet = CharSet.Unicode, ExactSpelling = true)]
        static extern int InternalGetWindowText(IntPtr hwnd, StringBuilder text, int maxCount);

        [DllImport("user32.dll", EntryPoint = "IsWindowVisible", ExactSpelling = true)]
        [return: MarshalAs(UnmanagedType.Bool)]
        static extern bool IsWindowVisible(IntPtr hwnd);

        [DllImport("user32.dll", EntryPoint = "IsWindowEnabled", ExactSpelling = true)]
        [return: MarshalAs(UnmanagedType.Bool)]
        static extern bool IsWindowEnabled(IntPtr hwnd);

        [DllImport("user32.dll", EntryPoint = "GetWindowLongW", ExactSpelling = true)]
        static extern int GetWindowLong(IntPtr hwnd, int index);

        [DllImport("user32.dll", EntryPoint = "GetParent", ExactSpelling = true)]
        static extern IntPtr GetParent(IntPtr hwnd);

        [DllImport("user32.dll", EntryPoint = "GetDlgCtrlID", ExactSpelling = true)]
        static extern int GetDlgCtrlID(IntPtr hwnd);

        [DllImport("user32.dll", EntryPoint = "PostMessageW", ExactSpelling = true, SetLastError = true)]
        [return: MarshalAs(UnmanagedType.Bool)]
        static extern bool PostMessage(IntPtr hwnd, uint message, IntPtr wParam, IntPtr lParam);
    }
}

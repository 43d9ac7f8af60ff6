// From a frame's body to the bytes of its answer: parse (§3), check the
// token (x-token, extension token), find the tool, check the settings, bind
// the parameters, run with the deadline of TimeoutSeconds, add Ver. Every
// failure becomes the error the table of §3 names; a tool that throws is an
// internal_error, never a dead connection.
//
// Tools run on a worker (Task.Run), never on the main thread: only what a
// tool asks of the Editor (IEditorBackend) is queued for it. So a tool that
// must not wait for the main thread (press-dialog-button: the dialog holds
// it) simply never asks. get-editor-state is not a tool: the dispatcher
// answers it itself, at once, on the thread that read the request, and
// never journals it (a client asks it every few seconds while a call waits).

using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Core
{
    /// <summary>
    /// Thrown by a tool whose answer the domain reload will cut off (a
    /// compile that changed scripts): the result is journaled for x-resume
    /// and nothing is sent.
    /// </summary>
    public sealed class AnswerWithheld : Exception
    {
        public JObject Result { get; }

        public AnswerWithheld(JObject result) : base("the domain reloads before the answer can be sent")
        {
            Result = result;
        }
    }

    /// <summary>Answers requests with the registered tools.</summary>
    public sealed class Dispatcher
    {
        readonly ToolRegistry registry;
        readonly SecurityChecker security;
        readonly string version;

        /// <param name="version">The package version every result carries as Ver.</param>
        public Dispatcher(ToolRegistry registry, SecurityChecker security, string version)
        {
            this.registry = registry;
            this.security = security;
            this.version = version;
        }

        public ToolRegistry Registry => registry;

        /// <summary>What get-version reports.</summary>
        public EditorInfo Editor { get; set; } = new EditorInfo();

        /// <summary>The resume journal (§5); null: x-resume is ignored and requests run again.</summary>
        public RequestJournal Journal { get; set; }

        public SecurityChecker Security => security;

        /// <summary>The Editor the tools work on (Unity's APIs, or the headless host's model).</summary>
        public IEditorBackend Backend { get; set; }

        /// <summary>This Editor's project folder, for x-uloop's expectedProjectRoot (null: not checked).</summary>
        public string ProjectRoot { get; set; }

        /// <summary>This server's session id, for x-uloop's expectedServerSessionId (null: not checked).</summary>
        public string ServerSessionId { get; set; }

        /// <summary>
        /// This Editor's token (<see cref="LinkToken"/>), which every request
        /// must carry as x-token unless the settings allow clients without
        /// one (null or empty: not enforced).
        /// </summary>
        public string Token { get; set; }

        /// <summary>Whether requests must carry the token now (read at each request: the settings change while the Editor runs).</summary>
        public bool TokenEnforced => !string.IsNullOrEmpty(Token) && !security.Settings.AllowClientsWithoutToken;

        /// <summary>
        /// This domain's PlayMode runs that went on after the reload of
        /// entering play mode (the Editor layer's callbacks, registered at
        /// load, report them); null: a PlayMode run is never carried.
        /// </summary>
        public PlayModeRuns PlayModeRuns { get; set; }

        /// <summary>Takes up the calls an earlier domain carried into this one (its server has started).</summary>
        public void TakeUpCarriedCalls()
        {
            var runs = PlayModeRuns;
            if (runs != null)
            {
                runs.TakeUp(this);
            }
        }

        /// <summary>
        /// The main thread as get-editor-state reports it (extension
        /// editor-state); null: the method is unknown here (-32601).
        /// </summary>
        public EditorStateSource EditorState { get; set; }

        /// <summary>
        /// get-version's Capabilities now: the Editor's, then output-schema
        /// (get-tool-details gives the typed tools' outputSchema, whatever
        /// the Editor), then editor-state and dialog-buttons where this
        /// dispatcher offers them, then token while it is enforced.
        /// </summary>
        public List<string> Capabilities()
        {
            var capabilities = new List<string>(Editor.Capabilities ?? new string[0]);
            capabilities.Add(ToolResults.Capability);
            var state = EditorState;
            if (state != null)
            {
                capabilities.Add(EditorStateSource.Capability);
                if (state.Dialogs.CanPress)
                {
                    capabilities.Add(ModalDialogs.Capability);
                }
            }
            if (TokenEnforced)
            {
                capabilities.Add("token");
            }
            var distinct = new List<string>();
            foreach (var name in capabilities)
            {
                if (!distinct.Contains(name))
                {
                    distinct.Add(name);
                }
            }
            return distinct;
        }

        /// <summary>Whether this Editor offers the tool (one of an extension only where it names the extension).</summary>
        public bool Offers(IUnityTool tool)
        {
            var extension = tool.Info.Extension;
            return string.IsNullOrEmpty(extension) || Capabilities().Contains(extension);
        }

        /// <summary>data.message of the unauthorized answer.</summary>
        public const string UnauthorizedMessage = "This Editor needs the token from Library/MCPInstance.json in every request (x-token); a client that cannot send one can be let in with Window > Unity MCP > Allow clients without a token.";

        /// <summary>
        /// The answer to one frame's body, or null when none is due (a
        /// notification). Never throws.
        /// </summary>
        public async Task<byte[]> Answer(byte[] body, ToolContext context)
        {
            JToken id = null;
            RpcRequest request;
            try
            {
                request = RpcRequest.Parse(body, out id);
            }
            catch (RpcError error)
            {
                return RpcWriter.Error(id, error);
            }
            if (request.IsNotification)
            {
                // Editors ignore client notifications (§4): nothing runs.
                return null;
            }
            if (TokenEnforced && !LinkToken.Matches(Token, request.Message[LinkToken.Member]))
            {
                // Before anything runs or is journaled (x-resume included).
                return RpcWriter.Error(request.Id, new RpcError(RpcErrorKind.Unauthorized, UnauthorizedMessage));
            }
            context.RequestId = request.Id;
            try
            {
                CheckExpectations(request.Message);
            }
            catch (RpcError error)
            {
                return RpcWriter.Error(request.Id, error);
            }
            var state = EditorState;
            if (state != null && request.Method == EditorStateSource.Method)
            {
                return AnswerEditorState(state, request);
            }
            var journal = Journal;
            if (journal != null && request.Message["x-resume"] is JValue resume && resume.Type == JTokenType.Boolean && (bool)resume)
            {
                JObject journaled;
                switch (journal.StateOf(request.Id, request.Method, out journaled))
                {
                    case JournalState.Completed:
                        return RpcWriter.Compact(journaled);
                    case JournalState.Started:
                        return RpcWriter.Error(request.Id, new RpcError(RpcErrorKind.Interrupted, request.Method + " was cut off by a domain reload before it finished").With("reason", "DomainReload"));
                    case JournalState.Carried:
                        return await AnswerCarried(journal, request, context).ConfigureAwait(false);
                }
            }
            if (journal != null)
            {
                journal.Started(request.Id, request.Method);
                context.JournalAnswer = result => journal.Completed(request.Id, request.Method, Response(request.Id, result));
                var domain = ServerSessionId;
                context.CarryAcrossReload = call =>
                {
                    call.Domain = domain;
                    journal.Carry(request.Id, request.Method, call);
                };
            }
            byte[] answer;
            try
            {
                var result = await Call(request.Method, request.Params, context).ConfigureAwait(false);
                answer = RpcWriter.Result(request.Id, result);
            }
            catch (AnswerWithheld withheld)
            {
                // The domain reloads before the answer can be sent: journaled
                // for x-resume, never sent on this connection (§5).
                if (journal != null)
                {
                    journal.Completed(request.Id, request.Method, Response(request.Id, withheld.Result));
                }
                return null;
            }
            catch (RpcError error)
            {
                answer = RpcWriter.Error(request.Id, error);
            }
            catch (Exception e)
            {
                answer = RpcWriter.Error(request.Id, new RpcError(RpcErrorKind.InternalError, request.Method + " failed: " + e.Message));
            }
            if (context.Cancellation.IsCancellationRequested)
            {
                // The connection went (a domain reload, the client left) while
                // the tool ran: no one to answer, and for x-resume the request
                // stays started, not completed, so a resend is told it was
                // interrupted rather than given the cancellation as its result.
                return null;
            }
            if (journal != null)
            {
                journal.Completed(request.Id, request.Method, JObject.Parse(System.Text.Encoding.UTF8.GetString(answer)));
            }
            return answer;
        }

        /// <summary>
        /// A resent request for a call that went on after its domain
        /// reloaded: its answer once this domain has it (the run's progress
        /// told meanwhile), or timeout at the call's deadline; none when the
        /// connection goes first.
        /// </summary>
        async Task<byte[]> AnswerCarried(RequestJournal journal, RpcRequest request, ToolContext context)
        {
            var completed = journal.WhenCompleted(request.Id, request.Method);
            var call = journal.CarriedOf(request.Id, request.Method);
            if (call == null)
            {
                // The carried run finished between the journal's first look
                // and this one (its answer replaced the carried entry, and is
                // handed to the waiters just after).
                if (await Task.WhenAny(completed, Task.Delay(5000)).ConfigureAwait(false) == completed)
                {
                    return RpcWriter.Compact(await completed.ConfigureAwait(false));
                }
                return RpcWriter.Error(request.Id, new RpcError(RpcErrorKind.Interrupted, request.Method + " was cut off by a domain reload before it finished").With("reason", "DomainReload"));
            }
            var runs = PlayModeRuns;
            using (runs != null ? runs.Follow(context.Progress) : null)
            {
                var left = call.Deadline - DateTime.UtcNow;
                var wait = left <= TimeSpan.Zero ? TimeSpan.Zero : left < TimeSpan.FromDays(7) ? left : TimeSpan.FromDays(7);
                var gone = Task.Delay(System.Threading.Timeout.Infinite, context.Cancellation);
                var first = await Task.WhenAny(completed, Task.Delay(wait), gone).ConfigureAwait(false);
                if (first == completed)
                {
                    return RpcWriter.Compact(await completed.ConfigureAwait(false));
                }
                Observe(gone);
                if (context.Cancellation.IsCancellationRequested)
                {
                    return null;
                }
                return RpcWriter.Error(request.Id, new RpcError(RpcErrorKind.Timeout, "Tool '" + request.Method + "' timed out after " + ToolSchema.Number(call.TimeoutSeconds) + " seconds"));
            }
        }

        /// <summary>
        /// get-editor-state (§6), on the calling thread (the socket's): it
        /// reads what the main thread left, never waits for it, and is not
        /// journaled (an x-resume of it simply reads again).
        /// </summary>
        byte[] AnswerEditorState(EditorStateSource state, RpcRequest request)
        {
            try
            {
                // TimeoutSeconds is every method's (§6): checked, never needed.
                Timeout(request.Params);
                var result = state.Read();
                result["Ver"] = version;
                return RpcWriter.Result(request.Id, result);
            }
            catch (RpcError error)
            {
                return RpcWriter.Error(request.Id, error);
            }
            catch (Exception e)
            {
                return RpcWriter.Error(request.Id, new RpcError(RpcErrorKind.InternalError, request.Method + " failed: " + e.Message));
            }
        }

        /// <summary>Runs a tool by name: its result with Ver, or an <see cref="RpcError"/>.</summary>
        public async Task<JObject> Call(string method, JObject parameters, ToolContext context)
        {
            var tool = registry.Find(method);
            if (tool == null || !Offers(tool))
            {
                throw new RpcError(RpcErrorKind.MethodNotFound, "Unknown tool: " + method);
            }
            security.Check(tool, registry.IsThirdParty(method));
            var timeout = Timeout(parameters) ?? TimeSpan.FromSeconds(tool.Info.TimeoutSeconds);
            context.Dispatcher = this;
            JObject result;
            using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(context.Cancellation))
            {
                var ends = DateTime.UtcNow + timeout;
                var bounded = new ToolContext
                {
                    Cancellation = deadline.Token,
                    Deadline = ends,
                    Progress = context.Progress,
                    Connection = context.Connection,
                    Dispatcher = this,
                    RequestId = context.RequestId,
                    JournalAnswer = context.JournalAnswer,
                    // A carried call keeps this call's deadline.
                    CarryAcrossReload = call =>
                    {
                        call.Deadline = ends;
                        call.TimeoutSeconds = timeout.TotalSeconds;
                        context.CarryAcrossReload(call);
                    },
                };
                // Started on a worker: a tool that blocks before its first
                // await (on the main thread, say) cannot hold back the deadline.
                var running = Task.Run(() => tool.Execute(parameters, bounded));
                var finished = await Task.WhenAny(running, Task.Delay(timeout)).ConfigureAwait(false);
                if (finished != running)
                {
                    deadline.Cancel();
                    Observe(running);
                    throw new RpcError(RpcErrorKind.Timeout, "Tool '" + method + "' timed out after " + ToolSchema.Number(timeout.TotalSeconds) + " seconds");
                }
                result = await running.ConfigureAwait(false);
            }
            result = result ?? new JObject();
            result["Ver"] = version;
            return result;
        }

        static TimeSpan? Timeout(JObject parameters)
        {
            foreach (var property in parameters.Properties())
            {
                if (!string.Equals(property.Name, ToolSchema.TimeoutParameter, StringComparison.OrdinalIgnoreCase) || property.Value.Type == JTokenType.Null)
                {
                    continue;
                }
                if (property.Value.Type != JTokenType.Integer && property.Value.Type != JTokenType.Float)
                {
                    throw new RpcError(RpcErrorKind.InvalidParams, "Parameter 'TimeoutSeconds' must be a number, not " + property.Value.ToString(Newtonsoft.Json.Formatting.None)).With("parameter", ToolSchema.TimeoutParameter);
                }
                var seconds = (double)property.Value;
                if (!(seconds >= 0.001 && seconds <= 24 * 3600))
                {
                    throw new RpcError(RpcErrorKind.InvalidParams, "Parameter 'TimeoutSeconds' must be between 0.001 and 86400, not " + ToolSchema.Number(seconds)).With("parameter", ToolSchema.TimeoutParameter);
                }
                return TimeSpan.FromSeconds(seconds);
            }
            return null;
        }

        /// <summary>The whole success response to <paramref name="id"/> (Ver added), as journaled.</summary>
        internal JObject Response(JToken id, JObject result)
        {
            var withVer = (JObject)result.DeepClone();
            withVer["Ver"] = version;
            return JObject.Parse(System.Text.Encoding.UTF8.GetString(RpcWriter.Result(id, withVer)));
        }

        /// <summary>uLoopMCP's x-uloop guard (§3): the client says which project and session it expects.</summary>
        void CheckExpectations(JObject message)
        {
            var uloop = message["x-uloop"] as JObject;
            if (uloop == null)
            {
                return;
            }
            var project = uloop["expectedProjectRoot"] as JValue;
            if (project != null && project.Type == JTokenType.String && ProjectRoot != null && !SamePath((string)project, ProjectRoot))
            {
                throw new RpcError(RpcErrorKind.ProjectMismatch, "This Editor has project " + ProjectRoot + ", not " + (string)project)
                    .With("actualProjectRoot", ProjectRoot);
            }
            var session = uloop["expectedServerSessionId"] as JValue;
            if (session != null && session.Type == JTokenType.String && ServerSessionId != null && (string)session != ServerSessionId)
            {
                throw new RpcError(RpcErrorKind.SessionChanged, "The Editor's session changed (now " + ServerSessionId + ", expected " + (string)session + ")")
                    .With("actualServerSessionId", ServerSessionId);
            }
        }

        static bool SamePath(string a, string b)
        {
            Func<string, string> normal = p =>
            {
                try
                {
                    p = System.IO.Path.GetFullPath(p);
                }
                catch (Exception)
                {
                }
                return p.Replace('\\', '/').TrimEnd('/');
            };
            var comparison = System.IO.Path.DirectorySeparatorChar == '\\' ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal;
            return string.Equals(normal(a), normal(b), comparison);
        }

        // A tool given up on may still fail later: its exception is observed, not lost.
        static void Observe(Task task)
        {
            task.ContinueWith(t => { _ = t.Exception; }, TaskContinuationOptions.OnlyOnFaulted);
        }
    }
}

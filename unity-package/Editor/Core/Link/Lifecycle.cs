// The server's life in one Editor domain (§5), the same code in Unity
// (McpServerController wires it to EditorApplication and AssemblyReloadEvents)
// and in the headless host (which drives it through a simulated main thread
// with Unity's synchronization context). Every method here is called on the
// Editor's main thread: Start from EditorApplication.delayCall once the
// domain has loaded, BeforeReload from beforeAssemblyReload, Quit from
// EditorApplication.quitting.

using System;
using System.Collections.Generic;

namespace UnityMcp.Core
{
    /// <summary>What an Editor gives the server's lifecycle.</summary>
    public interface IEditorDomain
    {
        /// <summary>The project folder (absolute, forward slashes).</summary>
        string Project { get; }

        /// <summary>The port to try first: the last one listened on in this Editor, else the setting.</summary>
        int PreferredPort { get; }

        /// <summary>Remembers, across domain reloads (SessionState), the port and whether the server runs.</summary>
        void Remember(int port, bool running);

        /// <summary>A dispatcher for a new server session: the tools of this domain, the backend.</summary>
        Dispatcher CreateDispatcher(string serverSessionId);

        /// <summary>Writes the discovery file (§7) and whatever else says where the server is.</summary>
        void Publish(string state, int port, string serverSessionId);

        /// <summary>Runs <paramref name="action"/> on the main thread once the current work is done (EditorApplication.delayCall).</summary>
        void DelayCall(Action action);

        void LogError(string message);
    }

    /// <summary>The server in one Editor domain: started, stopped, reloaded, quit.</summary>
    public sealed class ServerLifecycle
    {
        readonly IEditorDomain domain;
        EditorServer server;

        /// <summary>The server last stopped, whose sockets a domain unload closes.</summary>
        EditorServer stopped;

        public ServerLifecycle(IEditorDomain domain)
        {
            this.domain = domain;
        }

        public bool IsRunning => server != null && server.IsRunning;

        public int Port => server != null ? server.Port : 0;

        public string SessionId { get; private set; } = "";

        /// <summary>Why the server is not running, when it failed to start.</summary>
        public string LastError { get; private set; }

        /// <summary>The connected clients.</summary>
        public List<ClientConnection> Clients => server != null ? server.Clients : new List<ClientConnection>();

        /// <summary>What the last stop did.</summary>
        public ShutdownReport LastShutdown { get; private set; }

        /// <summary>Starts the server (no-op when running); after a reload, list_changed follows once the tools are back.</summary>
        public void Start(bool afterReload)
        {
            if (IsRunning)
            {
                return;
            }
            try
            {
                SessionId = Guid.NewGuid().ToString("N");
                var dispatcher = domain.CreateDispatcher(SessionId);
                server = new EditorServer(dispatcher);
                var port = server.Start(domain.PreferredPort);
                domain.Remember(port, true);
                domain.Publish("ready", port, SessionId);
                LastError = null;
                // A PlayMode run an earlier domain carried may have finished.
                dispatcher.TakeUpCarriedCalls();
                if (afterReload)
                {
                    var ready = server;
                    domain.DelayCall(() => { _ = ready.NotifyToolsChanged(); });
                }
            }
            catch (Exception e)
            {
                server = null;
                LastError = e.Message;
                domain.LogError("Unity MCP: the server could not start: " + e.Message);
            }
        }

        /// <summary>Stops the server: clients get the shutdown notification with this reason.</summary>
        public ShutdownReport Stop(string reason)
        {
            var stopping = server;
            server = null;
            stopped = stopping ?? stopped;
            if (stopping == null)
            {
                return LastShutdown = new ShutdownReport();
            }
            // On the main thread: it waits for no socket (a client that
            // cannot take the notification now is closed without it).
            return LastShutdown = stopping.Shutdown(reason);
        }

        /// <summary>beforeAssemblyReload: says so, then stops; the next domain starts again.</summary>
        public ShutdownReport BeforeReload()
        {
            var running = IsRunning;
            domain.Publish("reloading", Port != 0 ? Port : domain.PreferredPort, SessionId);
            domain.Remember(Port != 0 ? Port : domain.PreferredPort, running);
            return Stop("DomainReload");
        }

        /// <summary>EditorApplication.quitting: stops, and says the Editor is gone.</summary>
        public ShutdownReport Quit()
        {
            var port = Port != 0 ? Port : domain.PreferredPort;
            var report = Stop("EditorQuit");
            domain.Publish("stopped", port, SessionId);
            domain.Remember(port, false);
            return report;
        }

        /// <summary>Tells every client the tools changed (settings that offer tools differently).</summary>
        public void NotifyToolsChanged()
        {
            var current = server;
            if (current != null)
            {
                _ = current.NotifyToolsChanged();
            }
        }

        /// <summary>
        /// What a domain unload does to sockets the domain left open: they
        /// close, with no notification (the managed objects are gone).
        /// </summary>
        public void Unload()
        {
            foreach (var left in new[] { server, stopped })
            {
                if (left == null)
                {
                    continue;
                }
                foreach (var client in left.Clients)
                {
                    client.Close();
                }
            }
            server = null;
            stopped = null;
        }
    }

    /// <summary>What a shutdown did: clients it had, clients it notified.</summary>
    public sealed class ShutdownReport
    {
        public int Clients;
        public int Notified;

        public override string ToString()
        {
            return Notified + " of " + Clients + " clients notified";
        }
    }
}

// The headless host's control API: the subset of fake-unity's that the
// conformance suite uses (GET /state, POST /reload, /quit, /settings,
// /reset, GET|POST /faults, DELETE /faults/NAME), over HTTP on loopback.

using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace UnityMcp.Host
{
    public sealed class ControlApi
    {
        readonly HeadlessHost host;
        readonly HttpListener listener = new HttpListener();

        public ControlApi(HeadlessHost host)
        {
            this.host = host;
        }

        public string Url { get; private set; }

        /// <summary>Listens on <paramref name="port"/> (0: a free one).</summary>
        public void Start(int port)
        {
            if (port == 0)
            {
                var probe = new TcpListener(IPAddress.Loopback, 0);
                probe.Start();
                port = ((IPEndPoint)probe.LocalEndpoint).Port;
                probe.Stop();
            }
            Url = "http://127.0.0.1:" + port;
            listener.Prefixes.Add(Url + "/");
            listener.Start();
            Task.Run(Loop);
        }

        async Task Loop()
        {
            while (listener.IsListening)
            {
                HttpListenerContext context;
                try
                {
                    context = await listener.GetContextAsync();
                }
                catch (Exception)
                {
                    return;
                }
                _ = Task.Run(() => Serve(context));
            }
        }

        async Task Serve(HttpListenerContext context)
        {
            var status = 200;
            JToken answer;
            try
            {
                LoopbackOnly(context.Request);
                string text;
                using (var reader = new StreamReader(context.Request.InputStream, Encoding.UTF8))
                {
                    text = await reader.ReadToEndAsync();
                }
                var body = text.Trim().Length == 0 ? new JObject() : ModelEditor.ParseJson(text);
                var path = context.Request.Url.AbsolutePath.TrimEnd('/');
                var method = context.Request.HttpMethod;
                if (method == "GET" && path == "/state")
                {
                    answer = new JObject { ["port"] = host.Port, ["project"] = host.Project, ["settings"] = host.SettingsJson() };
                }
                else if (method == "POST" && path == "/reload")
                {
                    var o = (JObject)body;
                    var downtime = (int?)o["downtimeMs"];
                    var movePort = (bool?)o["movePort"] ?? false;
                    if ((bool?)o["wait"] ?? false)
                    {
                        answer = await host.Reload(downtime, movePort);
                    }
                    else
                    {
                        _ = host.Reload(downtime, movePort);
                        status = 202;
                        answer = new JObject { ["accepted"] = true };
                    }
                }
                else if (method == "POST" && path == "/quit")
                {
                    status = 202;
                    answer = new JObject { ["accepted"] = true };
                    _ = Task.Delay(50).ContinueWith(_ => host.Stop()).Unwrap();
                }
                else if (method == "POST" && path == "/settings")
                {
                    answer = host.UpdateSettings((JObject)body);
                }
                else if (method == "POST" && path == "/reset")
                {
                    host.Reset();
                    answer = new JObject { ["reset"] = true };
                }
                else if (method == "GET" && path == "/faults")
                {
                    answer = new JObject { ["faults"] = host.FaultsJson() };
                }
                else if (method == "POST" && path == "/faults")
                {
                    var rules = body is JArray ? ((JArray)body).Cast<JObject>() : body["faults"] is JArray ? ((JArray)body["faults"]).Cast<JObject>() : new[] { (JObject)body };
                    status = 201;
                    answer = new JObject { ["added"] = host.AddFaults(rules) };
                }
                else if (method == "DELETE" && path.StartsWith("/faults/", StringComparison.Ordinal))
                {
                    var name = Uri.UnescapeDataString(path.Substring("/faults/".Length));
                    if (host.RemoveFault(name))
                    {
                        answer = new JObject { ["removed"] = name };
                    }
                    else
                    {
                        status = 404;
                        answer = new JObject { ["error"] = "no fault named " + name };
                    }
                }
                else
                {
                    status = 404;
                    answer = new JObject { ["error"] = "no such endpoint; the headless host has GET /state, POST /reload, /quit, /settings, /reset, GET|POST /faults, DELETE /faults/NAME" };
                }
            }
            catch (Forbidden e)
            {
                status = 403;
                answer = new JObject { ["error"] = e.Message };
            }
            catch (Exception e) when (e is ArgumentException || e is InvalidCastException || e is Newtonsoft.Json.JsonException || e is FormatException || e is NullReferenceException)
            {
                status = 400;
                answer = new JObject { ["error"] = e.Message };
            }
            catch (InvalidOperationException e)
            {
                status = 409;
                answer = new JObject { ["error"] = e.Message };
            }
            catch (Exception e)
            {
                status = 500;
                answer = new JObject { ["error"] = e.ToString() };
            }
            var bytes = Encoding.UTF8.GetBytes(answer.ToString(Newtonsoft.Json.Formatting.None));
            try
            {
                context.Response.StatusCode = status;
                context.Response.ContentType = "application/json";
                context.Response.ContentLength64 = bytes.Length;
                await context.Response.OutputStream.WriteAsync(bytes, 0, bytes.Length);
                context.Response.Close();
            }
            catch (Exception)
            {
                // The caller went away: nothing to answer.
            }
        }

        sealed class Forbidden : Exception
        {
            public Forbidden(string message) : base(message)
            {
            }
        }

        /// <summary>
        /// Loopback callers only: a web page may POST text/plain to any local
        /// port without a preflight, and DNS rebinding gives one a name that
        /// resolves here, so a Host that is not a loopback name, or an Origin
        /// that is not a loopback page, is refused.
        /// </summary>
        static void LoopbackOnly(HttpListenerRequest request)
        {
            var host = request.Headers["Host"] ?? "";
            if (!IsLoopbackAuthority(host))
            {
                throw new Forbidden("the control API answers loopback callers only: Host \"" + host + "\" is not a loopback name");
            }
            var origin = request.Headers["Origin"];
            if (origin != null)
            {
                var authority = origin.StartsWith("http://", StringComparison.Ordinal) ? origin.Substring(7)
                    : origin.StartsWith("https://", StringComparison.Ordinal) ? origin.Substring(8) : null;
                if (authority == null || !IsLoopbackAuthority(authority))
                {
                    throw new Forbidden("the control API answers loopback callers only: Origin \"" + origin + "\" is not a loopback page");
                }
            }
        }

        /// <summary>127.0.0.1:8080, localhost, [::1]:9 and the like.</summary>
        public static bool IsLoopbackAuthority(string authority)
        {
            string host;
            if (authority.StartsWith("[", StringComparison.Ordinal))
            {
                var end = authority.IndexOf(']');
                host = end > 0 ? authority.Substring(1, end - 1) : "";
            }
            else
            {
                var colon = authority.LastIndexOf(':');
                host = colon >= 0 ? authority.Substring(0, colon) : authority;
            }
            IPAddress address;
            return string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
                || (IPAddress.TryParse(host, out address) && IPAddress.IsLoopback(address));
        }

        public void Stop()
        {
            listener.Close();
        }
    }
}

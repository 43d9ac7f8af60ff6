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
        TcpListener listener;

        public ControlApi(HeadlessHost host)
        {
            this.host = host;
        }

        public string Url { get; private set; }

        /// <summary>Listens on <paramref name="port"/> (0: a free one), on loopback.</summary>
        public void Start(int port)
        {
            listener = new TcpListener(IPAddress.Loopback, port);
            listener.Start();
            Url = "http://127.0.0.1:" + ((IPEndPoint)listener.LocalEndpoint).Port;
            Task.Run(Loop);
        }

        async Task Loop()
        {
            while (true)
            {
                TcpClient client;
                try
                {
                    client = await listener.AcceptTcpClientAsync();
                }
                catch (Exception)
                {
                    return;
                }
                _ = Task.Run(() => Serve(client));
            }
        }

        /// <summary>
        /// One HTTP/1.1 request read off the connection (read here, not by
        /// HttpListener, which keeps one of two Host headers where HTTP says
        /// such a request is a 400).
        /// </summary>
        sealed class Request
        {
            public string Method = "";
            public string Path = "";
            public readonly System.Collections.Generic.List<System.Collections.Generic.KeyValuePair<string, string>> Headers =
                new System.Collections.Generic.List<System.Collections.Generic.KeyValuePair<string, string>>();
            public string Body = "";

            public string[] All(string name) => Headers.Where(h => string.Equals(h.Key, name, StringComparison.OrdinalIgnoreCase)).Select(h => h.Value).ToArray();

            public string Header(string name) => All(name).FirstOrDefault();
        }

        const int HeaderLimit = 64 * 1024;
        const int BodyLimit = 1024 * 1024;

        /// <summary>The request, or a malformed one as ArgumentException (a 400).</summary>
        static async Task<Request> Read(Stream stream)
        {
            var head = new MemoryStream();
            var one = new byte[1];
            // Byte by byte to the blank line: the body is read by its length.
            while (true)
            {
                if (await stream.ReadAsync(one, 0, 1) == 0)
                {
                    throw new IOException("the caller closed the connection mid-request");
                }
                head.WriteByte(one[0]);
                var n = head.Length;
                if (n >= 4)
                {
                    var b = head.GetBuffer();
                    if (b[n - 4] == '\r' && b[n - 3] == '\n' && b[n - 2] == '\r' && b[n - 1] == '\n')
                    {
                        break;
                    }
                }
                if (n > HeaderLimit)
                {
                    throw new ArgumentException("the request's header is over " + HeaderLimit + " bytes");
                }
            }
            var lines = Encoding.ASCII.GetString(head.GetBuffer(), 0, (int)head.Length).Split(new[] { "\r\n" }, StringSplitOptions.None);
            var start = lines[0].Split(' ');
            if (start.Length != 3 || !start[2].StartsWith("HTTP/1.", StringComparison.Ordinal))
            {
                throw new ArgumentException("not an HTTP/1.1 request line: " + lines[0]);
            }
            var request = new Request { Method = start[0], Path = start[1].Split('?')[0] };
            foreach (var line in lines.Skip(1).Where(l => l.Length > 0))
            {
                var colon = line.IndexOf(':');
                if (colon <= 0)
                {
                    throw new ArgumentException("a header line without a name: " + line);
                }
                request.Headers.Add(new System.Collections.Generic.KeyValuePair<string, string>(line.Substring(0, colon).Trim(), line.Substring(colon + 1).Trim()));
            }
            var length = request.Header("Content-Length");
            int size;
            if (length == null)
            {
                size = 0;
            }
            else if (!int.TryParse(length, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out size) || size > BodyLimit || request.All("Content-Length").Length > 1)
            {
                throw new ArgumentException("a Content-Length of at most " + BodyLimit + " bytes, once, is needed, not " + length);
            }
            var body = new byte[size];
            for (var read = 0; read < size;)
            {
                var got = await stream.ReadAsync(body, read, size - read);
                if (got == 0)
                {
                    throw new IOException("the caller closed the connection mid-body");
                }
                read += got;
            }
            request.Body = Encoding.UTF8.GetString(body);
            return request;
        }

        async Task Serve(TcpClient client)
        {
            using (client)
            {
                var stream = client.GetStream();
                // A caller that sends nothing is not waited for.
                var reading = Read(stream);
                if (await Task.WhenAny(reading, Task.Delay(TimeSpan.FromSeconds(10))) != reading)
                {
                    return;
                }
                int status;
                JToken answer;
                try
                {
                    var answered = await Answer(await reading);
                    status = answered.Item1;
                    answer = answered.Item2;
                }
                catch (IOException)
                {
                    return;
                }
                catch (ArgumentException e)
                {
                    status = 400;
                    answer = new JObject { ["error"] = e.Message };
                }
                var body = Encoding.UTF8.GetBytes(answer.ToString(Newtonsoft.Json.Formatting.None));
                var header = Encoding.ASCII.GetBytes("HTTP/1.1 " + status + " " + Reason(status) + "\r\nContent-Type: application/json\r\nContent-Length: " + body.Length + "\r\nConnection: close\r\n\r\n");
                try
                {
                    await stream.WriteAsync(header, 0, header.Length);
                    await stream.WriteAsync(body, 0, body.Length);
                }
                catch (Exception e) when (e is IOException || e is ObjectDisposedException)
                {
                    // The caller went away: nothing to answer.
                }
            }
        }

        static string Reason(int status)
        {
            switch (status)
            {
                case 200: return "OK";
                case 201: return "Created";
                case 202: return "Accepted";
                case 400: return "Bad Request";
                case 403: return "Forbidden";
                case 404: return "Not Found";
                case 409: return "Conflict";
                default: return "Internal Server Error";
            }
        }

        async Task<Tuple<int, JToken>> Answer(Request request)
        {
            var status = 200;
            JToken answer;
            try
            {
                LoopbackOnly(request);
                var text = request.Body;
                var body = text.Trim().Length == 0 ? new JObject() : ModelEditor.ParseJson(text);
                var path = request.Path.TrimEnd('/');
                var method = request.Method;
                if (method == "GET" && path == "/state")
                {
                    answer = new JObject { ["port"] = host.Port, ["project"] = host.Project, ["settings"] = host.SettingsJson(), ["reloads"] = host.Reloads, ["domain"] = host.DomainJson(), ["playMode"] = host.PlayModeJson() };
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
            return Tuple.Create(status, answer);
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
        static void LoopbackOnly(Request request)
        {
            // HTTP/1.1 (RFC 9112 §3.2): a request with more than one Host is a 400.
            var hosts = request.All("Host");
            if (hosts.Length > 1)
            {
                throw new ArgumentException("a request has one Host header, not " + hosts.Length);
            }
            var host = request.Header("Host") ?? "";
            if (!IsLoopbackAuthority(host))
            {
                throw new Forbidden("the control API answers loopback callers only: Host \"" + host + "\" is not a loopback name");
            }
            var origin = request.Header("Origin");
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
            // Stop() leaves a fresh socket for a later Start (mono): closed too.
            listener.Stop();
            listener.Server.Close();
        }
    }
}

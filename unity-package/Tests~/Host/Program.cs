// unity-mcp-host: our C# Editor server (the package's core) running headless
// under mono, on a model of a Unity project, for the conformance suite
// (`unity-conformance run --target mono`). Prints one JSON line on stdout
// when it listens: {"port":N,"control":"http://127.0.0.1:M","project":"…"};
// logs go to stderr. Runs until POST /quit, or its stdin closes. With
// --batchmode it plays Unity started in batch mode (Tests~/unity-shaped-editor
// starts it so): the project's scripts compiled first (an error stops it,
// exit 1, as Unity does), no control API, and it runs until it is killed. As an
// Editor does, it makes a token once per process and publishes it only in
// the project's Library/MCPInstance.json ("token"); every request must
// carry it as "x-token" unless POST /settings {"allowClientsWithoutToken":
// true}. As an Editor does, it also has an entry (no token) in the per-user
// registry of open Editors while it runs: UNITY_MCP_EDITORS_DIR when set,
// else the user's own (a test run sets it to a temporary folder).

using System;
using System.IO;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using UnityMcp.Core;

namespace UnityMcp.Host
{
    public static class Program
    {
        const string Usage = "usage: unity-mcp-host --project DIR --state FILE [--port N] [--control-port N] [--snippet-reference DLL]... [--batchmode]\n       unity-mcp-host --output-schemas";

        /// <summary>The output schema of every tool of the package (its core assembly's), and get-editor-state's, as the fixture's text.</summary>
        public static string PackageOutputSchemas()
        {
            var core = typeof(Dispatcher).Assembly;
            return ToolResults.CatalogueText(ToolRegistry.Discover(new[] { core }, new[] { core }).All);
        }

        /// <summary>
        /// Unity in batch mode compiles the project's scripts before
        /// -executeMethod, and with an error logs them and quits (exit 1):
        /// said so on stderr, Unity's log.
        /// </summary>
        static bool CompilesAtStart(ModelEditor editor)
        {
            var errors = 0;
            foreach (var d in editor.CompileAtStart())
            {
                Console.Error.WriteLine(d.UnityMessage);
                errors += d.IsError ? 1 : 0;
            }
            if (errors == 0)
            {
                return true;
            }
            Console.Error.WriteLine("Scripts have compiler errors.");
            Console.Error.WriteLine("Exiting without the bug reporter. Application will terminate with return code 1");
            return false;
        }

        public static int Main(string[] args)
        {
            string project = null;
            string state = null;
            var port = 0;
            var controlPort = 0;
            var batchMode = false;
            var snippetReferences = new System.Collections.Generic.List<string>();
            for (var i = 0; i < args.Length; i++)
            {
                Func<string> value = () =>
                {
                    if (i + 1 >= args.Length)
                    {
                        throw new ArgumentException(args[i] + " needs a value");
                    }
                    return args[++i];
                };
                try
                {
                    switch (args[i])
                    {
                        case "--project":
                            project = value();
                            break;
                        case "--state":
                            state = value();
                            break;
                        case "--port":
                            port = int.Parse(value());
                            break;
                        case "--control-port":
                            controlPort = int.Parse(value());
                            break;
                        // An assembly execute-dynamic-code's snippets compile
                        // against (Unity's API as stubs, from unity-versions).
                        case "--snippet-reference":
                            snippetReferences.Add(Path.GetFullPath(value()));
                            break;
                        case "--batchmode":
                            batchMode = true;
                            break;
                        case "--help":
                            Console.WriteLine(Usage);
                            return 0;
                        // The package's output schemas, as the fixture
                        // fixtures/editor-models/package.output-schemas.json
                        // holds them (Tests~/output-schemas writes it).
                        case "--output-schemas":
                            Console.Out.Write(PackageOutputSchemas());
                            Console.Out.Flush();
                            return 0;
                        default:
                            throw new ArgumentException("unknown argument " + args[i]);
                    }
                }
                catch (Exception e) when (e is ArgumentException || e is FormatException || e is OverflowException)
                {
                    Console.Error.WriteLine("unity-mcp-host: " + e.Message + "\n" + Usage);
                    return 2;
                }
            }
            if (project == null || state == null || !Directory.Exists(project) || !File.Exists(state))
            {
                Console.Error.WriteLine("unity-mcp-host: --project must be a folder and --state an editor state file\n" + Usage);
                return 2;
            }
            // Unity writes Library/EditorInstance.json as it opens the project,
            // before any script compiles, and deletes it when it closes (a
            // crash leaves it naming a dead process): the host does the same.
            UnityInstanceFile.Write(project, state);
            try
            {
                return Serve(project, state, port, controlPort, batchMode, snippetReferences);
            }
            finally
            {
                UnityInstanceFile.Remove(project);
            }
        }

        static int Serve(string project, string state, int port, int controlPort, bool batchMode, System.Collections.Generic.List<string> snippetReferences)
        {
            HeadlessHost host;
            ControlApi control = null;
            try
            {
                var editor = new ModelEditor(ModelEditor.LoadState(state), project);
                editor.SnippetReferences.AddRange(snippetReferences);
                if (batchMode && !CompilesAtStart(editor))
                {
                    return 1;
                }
                host = new HeadlessHost(editor);
                host.Start(port);
                if (batchMode)
                {
                    // What BatchMode.Start logs once the server listens.
                    Console.Error.WriteLine("Unity MCP: listening on 127.0.0.1:" + host.Port + " (ready)");
                    Console.Error.Flush();
                    host.Quit.Task.Wait();
                    host.Stop().Wait();
                    return 0;
                }
                control = new ControlApi(host);
                control.Start(controlPort);
            }
            catch (Exception e)
            {
                Console.Error.WriteLine("unity-mcp-host: cannot start: " + e.Message);
                return 1;
            }
            Console.WriteLine(new JObject { ["port"] = host.Port, ["control"] = control.Url, ["project"] = host.Project }.ToString(Newtonsoft.Json.Formatting.None));
            Console.Out.Flush();
            Console.Error.WriteLine("unity-mcp-host: listening on 127.0.0.1:" + host.Port + ", control API " + control.Url);
            // The process that started us going away ends us too.
            var stdinClosed = Task.Run(() =>
            {
                while (Console.In.ReadLine() != null)
                {
                }
            });
            Task.WaitAny(host.Quit.Task, stdinClosed);
            if (!host.Quit.Task.IsCompleted)
            {
                host.Stop().Wait();
            }
            control.Stop();
            return 0;
        }
    }

    /// <summary>Unity's own Library/EditorInstance.json, as Unity writes it.</summary>
    static class UnityInstanceFile
    {
        static string PathIn(string project) => Path.Combine(Path.Combine(project, "Library"), "EditorInstance.json");

        public static void Write(string project, string statePath)
        {
            try
            {
                Directory.CreateDirectory(Path.Combine(project, "Library"));
                var version = (string)ModelEditor.LoadState(statePath).SelectToken("editor.unityVersion") ?? "";
                var json = new JObject
                {
                    ["process_id"] = System.Diagnostics.Process.GetCurrentProcess().Id,
                    ["version"] = version,
                    ["app_path"] = "unity-mcp-host",
                    ["app_contents_path"] = "unity-mcp-host",
                };
                File.WriteAllText(PathIn(project), json.ToString(Newtonsoft.Json.Formatting.Indented) + "\n");
            }
            catch (Exception e)
            {
                // Never what stops the host: its discovery file says the rest.
                Console.Error.WriteLine("unity-mcp-host: cannot write Library/EditorInstance.json: " + e.Message);
            }
        }

        /// <summary>Deleted when the host closes, if it is still this process's.</summary>
        public static void Remove(string project)
        {
            try
            {
                var path = PathIn(project);
                if (File.Exists(path) && (int?)JObject.Parse(File.ReadAllText(path))["process_id"] == System.Diagnostics.Process.GetCurrentProcess().Id)
                {
                    File.Delete(path);
                }
            }
            catch (Exception e) when (e is IOException || e is UnauthorizedAccessException || e is Newtonsoft.Json.JsonException)
            {
            }
        }
    }
}
